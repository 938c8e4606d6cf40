package media

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// AppendDataURI appends "data:MIME;base64,…" holding data to dst.
func AppendDataURI(dst []byte, mime string, data []byte) []byte {
	dst = appendDataURIPrefix(dst, mime)
	return base64.StdEncoding.AppendEncode(dst, data)
}

func appendDataURIPrefix(dst []byte, mime string) []byte {
	dst = append(dst, "data:"...)
	dst = append(dst, mime...)
	return append(dst, ";base64,"...)
}

// ParseDataURI splits a base64 data URI ("data:image/png;base64,…") into its media
// type and decoded bytes. Only the base64 form is accepted: it is what OpenAI clients
// send for images.
func ParseDataURI(s string) (mime string, data []byte, err error) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return "", nil, errors.New("media: not a data URI (want data:<type>;base64,<data>)")
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return "", nil, errors.New("media: data URI has no comma before its data")
	}
	mime, ok = strings.CutSuffix(meta, ";base64")
	if !ok {
		return "", nil, fmt.Errorf("media: data URI %q is not base64-encoded", "data:"+meta)
	}
	data, err = DecodeBase64(payload)
	if err != nil {
		return "", nil, err
	}
	return mime, data, nil
}

// DecodeBase64 decodes standard base64, padded or not.
func DecodeBase64(s string) ([]byte, error) {
	enc := base64.StdEncoding
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	data, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("media: bad base64 data: %w", err)
	}
	return data, nil
}

// base64Appender is an io.Writer that base64-encodes into a growing byte slice, so a
// generated file goes straight into a request body without a second copy.
type base64Appender struct {
	dst  []byte
	tail [3]byte
	n    int
}

func newBase64Appender(dst []byte) *base64Appender { return &base64Appender{dst: dst} }

func (a *base64Appender) Write(p []byte) (int, error) {
	total := len(p)
	if a.n > 0 {
		for a.n < 3 && len(p) > 0 {
			a.tail[a.n] = p[0]
			a.n, p = a.n+1, p[1:]
		}
		if a.n < 3 {
			return total, nil
		}
		a.dst = base64.StdEncoding.AppendEncode(a.dst, a.tail[:])
		a.n = 0
	}
	whole := len(p) / 3 * 3
	a.dst = base64.StdEncoding.AppendEncode(a.dst, p[:whole])
	a.n = copy(a.tail[:], p[whole:])
	return total, nil
}

// close writes the padded tail and returns the slice.
func (a *base64Appender) close() []byte {
	a.dst = base64.StdEncoding.AppendEncode(a.dst, a.tail[:a.n])
	a.n = 0
	return a.dst
}

// rand is a splitmix64 stream: cheap, seeded and the same on every platform.
type rand struct{ s uint64 }

func newRand(seed uint64) *rand { return &rand{seed} }

func (r *rand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
