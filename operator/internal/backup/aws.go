package backup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// AWS shared files as coreos etcd-operator v0.9.4's awsSecret holds them: the
// Secret's keys are the file names, mounted as a directory.
const (
	AWSCredentialsFile = "credentials"
	AWSConfigFile      = "config"
	awsProfile         = "default"
)

// AWSConfig is what the backup and restore pods read from an awsSecret.
type AWSConfig struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// Region is empty when the config file or its region is absent; the
	// store then asks the bucket's region.
	Region string
}

// LoadAWSDir reads profile "default" of the AWS shared files in dir:
// credentials (aws_access_key_id and aws_secret_access_key required,
// aws_session_token optional) and config (region, optional; "[default]" or
// "[profile default]").
func LoadAWSDir(dir string) (AWSConfig, error) {
	var c AWSConfig
	credsFile := filepath.Join(dir, AWSCredentialsFile)
	creds, err := readINISection(credsFile, awsProfile)
	if err != nil {
		return c, err
	}
	c.AccessKeyID, c.SecretAccessKey, c.SessionToken = creds["aws_access_key_id"], creds["aws_secret_access_key"], creds["aws_session_token"]
	for _, k := range []struct{ name, value string }{{"aws_access_key_id", c.AccessKeyID}, {"aws_secret_access_key", c.SecretAccessKey}} {
		if k.value == "" {
			return c, fmt.Errorf("%s: profile [%s] has no %s", credsFile, awsProfile, k.name)
		}
	}
	configFile := filepath.Join(dir, AWSConfigFile)
	config, err := readINISection(configFile, awsProfile, "profile "+awsProfile)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case errors.Is(err, errNoSection):
	case err != nil:
		return c, err
	default:
		c.Region = config["region"]
	}
	return c, nil
}

var errNoSection = errors.New("no such profile")

// readINISection returns the keys of the first of sections that file has,
// in the AWS shared files' INI dialect: "[section]" headers, "key = value"
// lines, comments starting with '#' or ';'.
func readINISection(file string, sections ...string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("reading AWS %s file: %w", filepath.Base(file), err)
	}
	defer func() { _ = f.Close() }()
	found := map[string]map[string]string{}
	var current map[string]string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("%s:%d: malformed section header %q", file, n, line)
			}
			name := strings.Join(strings.Fields(line[1:len(line)-1]), " ")
			if found[name] == nil {
				found[name] = map[string]string{}
			}
			current = found[name]
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want key = value, got %q", file, n, redact(line))
		}
		if current != nil {
			current[strings.ToLower(strings.TrimSpace(key))] = strings.TrimSpace(value)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	for _, s := range sections {
		if keys, ok := found[s]; ok {
			return keys, nil
		}
	}
	return nil, fmt.Errorf("%s: %w [%s]", file, errNoSection, strings.Join(sections, "] or ["))
}

// redact keeps a malformed line's first characters only: it may hold a secret.
func redact(line string) string {
	if len(line) > 8 {
		return line[:8] + "..."
	}
	return line
}
