package media

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
)

// ImageFormat is an image encoding: PNG or JPEG.
type ImageFormat string

// The image formats.
const (
	PNG  ImageFormat = "png"
	JPEG ImageFormat = "jpeg"
)

// ImageFormats lists the formats, in the order a "random" choice indexes them.
var ImageFormats = []ImageFormat{PNG, JPEG}

// ParseImageFormat reads "png", "jpeg" or "jpg" (any case).
func ParseImageFormat(s string) (ImageFormat, error) {
	switch strings.ToLower(s) {
	case "png":
		return PNG, nil
	case "jpeg", "jpg":
		return JPEG, nil
	}
	return "", fmt.Errorf("media: unknown image format %q; want png or jpeg", s)
}

// MIME returns the format's media type, e.g. "image/png".
func (f ImageFormat) MIME() string { return "image/" + string(f) }

// MaxImageSide and MaxImagePixels bound an image either side accepts: larger ones are
// refused before any pixel is made or decoded (a 16384-pixel side is far beyond every
// vision model's resize bound).
const (
	MaxImageSide   = 16384
	MaxImagePixels = 64 << 20
)

// CheckImageSize returns an error when width × height is not a drawable image size.
func CheckImageSize(width, height int) error {
	switch {
	case width < 1 || height < 1:
		return fmt.Errorf("media: image size %dx%d: width and height must be at least 1", width, height)
	case width > MaxImageSide || height > MaxImageSide:
		return fmt.Errorf("media: image size %dx%d: a side exceeds %d pixels", width, height, MaxImageSide)
	case width*height > MaxImagePixels:
		return fmt.Errorf("media: image size %dx%d: %d pixels exceed %d", width, height, width*height, MaxImagePixels)
	}
	return nil
}

// EncodeImage writes a width × height image in format f to w: a diagonal gradient
// between two seeded colours, with seeded noise in the low bits so that images of equal
// size differ (a server's image cache cannot serve them). The same seed gives the same
// bytes.
func EncodeImage(w io.Writer, f ImageFormat, width, height int, seed uint64) error {
	if err := CheckImageSize(width, height); err != nil {
		return err
	}
	img := drawImage(width, height, seed)
	switch f {
	case PNG:
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		return enc.Encode(w, img)
	case JPEG:
		return jpeg.Encode(w, img, &jpeg.Options{Quality: 85})
	}
	return fmt.Errorf("media: unknown image format %q; want png or jpeg", f)
}

// drawImage fills an opaque RGBA image. It is held only while it is encoded.
func drawImage(width, height int, seed uint64) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	r := newRand(seed)
	var a, b [3]uint32
	for i := range 3 {
		a[i], b[i] = uint32(r.next()&0xff), uint32(r.next()&0xff)
	}
	den := uint32(max(width+height-2, 1))
	for y := range height {
		row := img.Pix[y*img.Stride : y*img.Stride+4*width]
		for x := range width {
			t := uint32(x + y)
			n := r.next()
			p := row[4*x : 4*x+4 : 4*x+4]
			for c := range 3 {
				v := (a[c]*(den-t) + b[c]*t) / den
				p[c] = uint8(v ^ uint32(n>>(8*c))&0x0f)
			}
			p[3] = 0xff
		}
	}
	return img
}

// ImageInfo is what a header says about an image.
type ImageInfo struct {
	Format        ImageFormat
	Width, Height int
}

// DecodeImageInfo reads an image's format and size from its header (PNG or JPEG) and
// checks the size with [CheckImageSize]. It does not decode the pixels; a truncated or
// corrupt header is an error.
func DecodeImageInfo(data []byte) (ImageInfo, error) {
	var f ImageFormat
	var cfg image.Config
	var err error
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		f = PNG
		cfg, err = png.DecodeConfig(bytes.NewReader(data))
	case bytes.HasPrefix(data, []byte{0xff, 0xd8}):
		f = JPEG
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
	default:
		return ImageInfo{}, errors.New("media: image is neither PNG nor JPEG (unknown signature)")
	}
	if err != nil {
		return ImageInfo{}, fmt.Errorf("media: %s header: %w", f, err)
	}
	if err := CheckImageSize(cfg.Width, cfg.Height); err != nil {
		return ImageInfo{}, err
	}
	return ImageInfo{f, cfg.Width, cfg.Height}, nil
}

// AppendImageDataURI appends a data URI ("data:image/png;base64,…") holding a
// generated image (see [EncodeImage]) to dst.
func AppendImageDataURI(dst []byte, f ImageFormat, width, height int, seed uint64) ([]byte, error) {
	if f != PNG && f != JPEG {
		return dst, fmt.Errorf("media: unknown image format %q; want png or jpeg", f)
	}
	dst = appendDataURIPrefix(dst, f.MIME())
	bw := newBase64Appender(dst)
	w := bufio.NewWriterSize(bw, 32<<10)
	if err := EncodeImage(w, f, width, height, seed); err != nil {
		return dst, err
	}
	if err := w.Flush(); err != nil {
		return dst, err
	}
	return bw.close(), nil
}
