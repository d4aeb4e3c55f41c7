package backup_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdproof/etcdproof/operator/internal/backup"
)

// awsDir writes the files of an awsSecret (nil content: no such key).
func awsDir(t *testing.T, credentials, config *string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]*string{backup.AWSCredentialsFile: credentials, backup.AWSConfigFile: config} {
		if content != nil {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(*content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func ptr(s string) *string { return &s }

func TestLoadAWSDir(t *testing.T) {
	creds := ptr(`# written by hand
[other]
aws_access_key_id = wrong

[default]
aws_access_key_id     = AKIDEXAMPLE
AWS_Secret_Access_Key=secret=with=equals
aws_session_token = token
`)
	for _, tc := range []struct {
		name       string
		config     *string
		wantRegion string
	}{
		{"default section", ptr("[default]\nregion = eu-west-1\n"), "eu-west-1"},
		{"profile section", ptr("; comment\n[profile default]\nregion=us-west-2\noutput = json\n"), "us-west-2"},
		{"no config key in the secret", nil, ""},
		{"config without the profile", ptr("[profile other]\nregion=x\n"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := backup.LoadAWSDir(awsDir(t, creds, tc.config))
			if err != nil {
				t.Fatal(err)
			}
			want := backup.AWSConfig{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret=with=equals", SessionToken: "token", Region: tc.wantRegion}
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestLoadAWSDirErrors(t *testing.T) {
	for _, tc := range []struct {
		name        string
		credentials *string
		want        []string // substrings of the error
	}{
		{"no credentials key", nil, []string{"credentials", "no such file"}},
		{"no secret key", ptr("[default]\naws_access_key_id = AKID\n"), []string{"credentials", "[default]", "aws_secret_access_key"}},
		{"no access key", ptr("[default]\naws_secret_access_key = s\n"), []string{"credentials", "aws_access_key_id"}},
		{"no default profile", ptr("[prod]\naws_access_key_id = AKID\n"), []string{"credentials", "no such profile [default]"}},
		{"malformed line", ptr("[default]\naws_secret_access_key topsecretvalue\n"), []string{"credentials:2", "want key = value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := backup.LoadAWSDir(awsDir(t, tc.credentials, ptr("[default]\nregion=r\n")))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "topsecretvalue") {
				t.Errorf("error %q shows the secret", err)
			}
		})
	}
}

func TestSplitS3Path(t *testing.T) {
	for path, want := range map[string][2]string{
		"bucket/etcd.backup":      {"bucket", "etcd.backup"},
		"bucket/dir/etcd.backup":  {"bucket", "dir/etcd.backup"},
		"bucket":                  {},
		"/etcd.backup":            {},
		"bucket/":                 {},
		"bucket/dir/":             {},
		"":                        {},
		"bucket/dir/etcd.backup/": {},
	} {
		bucket, key, err := backup.SplitS3Path(path)
		if want == [2]string{} {
			if err == nil || !strings.Contains(err.Error(), "<bucket>/<object key>") {
				t.Errorf("SplitS3Path(%q) = %q, %q, %v; want an error saying the format", path, bucket, key, err)
			}
			continue
		}
		if err != nil || bucket != want[0] || key != want[1] {
			t.Errorf("SplitS3Path(%q) = %q, %q, %v; want %q", path, bucket, key, err, want)
		}
	}
}

func TestNewS3StoreEndpoints(t *testing.T) {
	for endpoint, ok := range map[string]bool{
		"":                         true,
		"http://127.0.0.1:8333":    true,
		"https://s3.example.com/":  true,
		"minio.example.com:9000":   true,
		"ftp://s3.example.com":     false,
		"http://s3.example.com/b":  false,
		"http://":                  false,
		"http://u:p@s3.example.co": false,
	} {
		_, err := backup.NewS3Store(backup.S3Config{Endpoint: endpoint}, "bucket")
		if (err == nil) != ok {
			t.Errorf("endpoint %q: error %v, want ok=%v", endpoint, err, ok)
		}
	}
}
