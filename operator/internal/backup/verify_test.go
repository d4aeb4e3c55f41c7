package backup

import (
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// snapshotBytes is what etcd sends: pages, then their sha256.
func snapshotBytes(pages int) []byte {
	data := make([]byte, pages*4096)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	sum := sha256.Sum256(data)
	return append(data, sum[:]...)
}

func TestVerifyingReader(t *testing.T) {
	good := snapshotBytes(3)
	for _, tc := range []struct {
		name string
		data func() []byte
		want error
	}{
		{"whole", func() []byte { return good }, nil},
		{"flipped byte", func() []byte { b := append([]byte(nil), good...); b[100] ^= 1; return b }, ErrCorruptSnapshot},
		{"flipped sum", func() []byte { b := append([]byte(nil), good...); b[len(b)-1] ^= 1; return b }, ErrCorruptSnapshot},
		{"truncated", func() []byte { return good[:len(good)-4096] }, ErrCorruptSnapshot},
		{"no sum", func() []byte { return good[:len(good)-sha256.Size] }, ErrCorruptSnapshot},
		{"empty", func() []byte { return nil }, ErrCorruptSnapshot},
	} {
		for name, wrap := range map[string]func(io.Reader) io.Reader{
			"one byte at a time": iotest.OneByteReader,
			"whole reads":        func(r io.Reader) io.Reader { return io.LimitReader(r, 1<<30) },
			"odd chunks":         func(r io.Reader) io.Reader { return &chunks{r: r, sizes: []int{7, 40, 31, 2048, 33, 1}} },
		} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				data := tc.data()
				v := &verifyingReader{r: wrap(&sliceReader{data}), sum: sha256.New()}
				n, err := io.Copy(io.Discard, v)
				if !errors.Is(err, tc.want) {
					t.Fatalf("copy: %v, want %v", err, tc.want)
				}
				if n != int64(len(data)) || v.size != n {
					t.Fatalf("passed on %d bytes (counted %d) of %d", n, v.size, len(data))
				}
			})
		}
	}
}

type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// chunks reads in the given sizes, cyclically.
type chunks struct {
	r     io.Reader
	sizes []int
	i     int
}

func (c *chunks) Read(p []byte) (int, error) {
	n := min(len(p), c.sizes[c.i%len(c.sizes)])
	c.i++
	return c.r.Read(p[:n])
}
