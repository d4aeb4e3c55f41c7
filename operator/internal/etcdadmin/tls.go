package etcdadmin

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// ClientTLS is the configuration of a client that presents the certificate
// certPEM (with its key keyPEM) and accepts a member whose certificate is
// signed by a CA in caPEM and names serverName, whatever address it was
// dialed at.
//
// The operator dials members by pod IP, which their certificates do not
// name, and gRPC sets tls.Config.ServerName to the address dialed, so Go's
// own check would always fail: it is switched off and done in
// VerifyConnection instead, the same check against serverName.
func ClientTLS(certPEM, keyPEM, caPEM []byte, serverName string) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("client certificate and key: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("CA: no PEM certificate")
	}
	return &tls.Config{
		Certificates:       []tls.Certificate{cert},
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // verified in VerifyConnection, against serverName
		VerifyConnection: func(cs tls.ConnectionState) error {
			return verifyServer(cs, roots, serverName)
		},
	}, nil
}

// verifyServer is what Go checks of a server's certificate with RootCAs and
// ServerName set: the chain up to roots, the name, and use for server auth.
func verifyServer(cs tls.ConnectionState, roots *x509.CertPool, serverName string) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the member presented no certificate")
	}
	opts := x509.VerifyOptions{Roots: roots, DNSName: serverName, Intermediates: x509.NewCertPool()}
	for _, c := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
		return fmt.Errorf("member certificate: %w", err)
	}
	return nil
}
