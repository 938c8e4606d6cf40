package sse

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// splitter returns src in reads whose sizes cycle through sizes (each 1..256).
type splitter struct {
	src   []byte
	sizes []byte
	i     int
}

func (s *splitter) Read(p []byte) (int, error) {
	if len(s.src) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(s.sizes) > 0 {
		n = int(s.sizes[s.i%len(s.sizes)]) + 1
		s.i++
	}
	n = copy(p[:min(n, len(p))], s.src)
	s.src = s.src[n:]
	return n, nil
}

func events(r *Reader) ([]ev, error) {
	var out []ev
	for {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		id := "<nil>"
		if e.ID != nil {
			id = string(e.ID)
		}
		out = append(out, ev{string(e.Type), string(e.Data), id, e.Retry})
	}
}

// FuzzReader feeds event streams to the Reader, split into reads whose sizes the
// fuzzer chooses. Property: the events and the final error are those of the stream
// read whole, whatever the read boundaries (line ends, CRLF split across reads, a
// byte-order mark, the event size limit). Seeds: testdata/*.sse.
func FuzzReader(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.sse")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []byte{0}, uint16(0))
		f.Add(b, []byte{2, 0, 7}, uint16(64))
	}
	f.Add([]byte("\n\xEF\xBB\xBFdata: x\n\n"), []byte{0}, uint16(0))
	f.Add([]byte("data: a\r\ndata: b\r\r\n"), []byte{0, 1}, uint16(8))
	f.Add([]byte("id: 5\ndata: a\n\nid:\ndata: b\n\ndata: c\n\n"), []byte{3, 0}, uint16(0)) // an empty id resets the last event id
	f.Fuzz(func(t *testing.T, stream, sizes []byte, limit uint16) {
		whole, werr := events(NewReaderSize(&splitter{src: stream, sizes: []byte{255}}, 64, int(limit)))
		split, serr := events(NewReaderSize(&splitter{src: stream, sizes: sizes}, 64, int(limit)))
		if !reflect.DeepEqual(whole, split) || !errors.Is(serr, werr) && !errors.Is(werr, serr) {
			t.Fatalf("%q read in %v-byte reads = %v, %v; read whole = %v, %v", stream, sizes, split, serr, whole, werr)
		}
	})
}
