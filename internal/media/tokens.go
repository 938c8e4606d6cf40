package media

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// ImageRule is how a served model counts one image's prompt tokens. Each rule follows
// its model's published image processor; docs/multimodal.md states them.
type ImageRule struct {
	// Name is the rule's name: "qwen2-vl" or "mllama".
	Name string
	// Patch rules (Qwen2-VL, Qwen2.5-VL): the image is resized so both sides are
	// multiples of Factor and its area lies in [MinPixels, MaxPixels]; each
	// Factor × Factor cell is one token, plus Extra tokens around the image.
	Factor, MinPixels, MaxPixels, Extra int
	// Tile rules (Llama 3.2 Vision): the image is fitted to a canvas of at most
	// MaxTiles tiles of TileSize pixels; each tile is TileTokens tokens.
	TileSize, MaxTiles, TileTokens int
}

// The image rules.
var (
	// Qwen2VL is Qwen2-VL's and Qwen2.5-VL's: smart_resize to multiples of 28 pixels
	// (14-pixel patches merged 2 × 2) within the models' preprocessor bounds (min_pixels
	// 3136, max_pixels 12845056), one token a 28 × 28 cell, plus <|vision_start|> and
	// <|vision_end|>.
	Qwen2VL = ImageRule{Name: "qwen2-vl", Factor: 28, MinPixels: 56 * 56, MaxPixels: 16384 * 28 * 28, Extra: 2}
	// Llama32Vision is Llama 3.2 Vision's (mllama): the image fitted to the best canvas
	// of up to 4 tiles of 560 pixels, each tile (560/14)² + 1 = 1601 vision tokens.
	Llama32Vision = ImageRule{Name: "mllama", TileSize: 560, MaxTiles: 4, TileTokens: (560/14)*(560/14) + 1}
)

// ImageRules lists the rules by name.
var ImageRules = []ImageRule{Qwen2VL, Llama32Vision}

// ImageRuleFor picks the rule for a served model from its names (the request's model,
// the tokenizer's name or path), first match wins: names containing "mllama" or
// "llama-3.2" with "vision" get [Llama32Vision]; everything else, Qwen2-VL included,
// gets [Qwen2VL], the default.
func ImageRuleFor(names ...string) ImageRule {
	for _, n := range names {
		n = strings.ToLower(n)
		if strings.Contains(n, "mllama") || (strings.Contains(n, "llama-3.2") || strings.Contains(n, "llama3.2")) && strings.Contains(n, "vision") {
			return Llama32Vision
		}
		if strings.Contains(n, "qwen2") && strings.Contains(n, "vl") {
			return Qwen2VL
		}
	}
	return Qwen2VL
}

// Tokens returns the image's prompt tokens under the rule, or an error when the
// model's processor would refuse the image.
func (r ImageRule) Tokens(width, height int) (int, error) {
	if err := CheckImageSize(width, height); err != nil {
		return 0, err
	}
	if r.TileSize > 0 {
		h, w := r.Canvas(width, height)
		return (h / r.TileSize) * (w / r.TileSize) * r.TileTokens, nil
	}
	h, w, err := r.SmartResize(width, height)
	if err != nil {
		return 0, err
	}
	return (h/r.Factor)*(w/r.Factor) + r.Extra, nil
}

// SmartResize returns the height and width a patch rule resizes an image to, as
// Qwen2-VL's smart_resize does: both sides rounded (half to even) to multiples of
// Factor, then, if the area is out of bounds, scaled by the square root of the area
// ratio, rounding down (too large) or up (too small) to multiples of Factor. An aspect
// ratio above 200 is refused, as the processor refuses it.
func (r ImageRule) SmartResize(width, height int) (h, w int, err error) {
	f := float64(r.Factor)
	H, W := float64(height), float64(width)
	if math.Max(H, W)/math.Min(H, W) > 200 {
		return 0, 0, fmt.Errorf("media: image %dx%d: aspect ratio %.4g exceeds 200, which %s refuses", width, height, math.Max(H, W)/math.Min(H, W), r.Name)
	}
	h = int(math.RoundToEven(H/f)) * r.Factor
	w = int(math.RoundToEven(W/f)) * r.Factor
	switch {
	case h*w > r.MaxPixels:
		beta := math.Sqrt(H * W / float64(r.MaxPixels))
		h = max(r.Factor, int(math.Floor(H/beta/f))*r.Factor)
		w = max(r.Factor, int(math.Floor(W/beta/f))*r.Factor)
	case h*w < r.MinPixels:
		beta := math.Sqrt(float64(r.MinPixels) / (H * W))
		h = int(math.Ceil(H*beta/f)) * r.Factor
		w = int(math.Ceil(W*beta/f)) * r.Factor
	}
	return h, w, nil
}

// Canvas returns the height and width of the tile canvas a tile rule fits an image to,
// as mllama's get_optimal_tiled_canvas does: among the arrangements of at most MaxTiles
// tiles, the scale that fits the image without distortion is the smallest one that
// upscales, else the largest that downscales; ties go to the smallest canvas.
func (r ImageRule) Canvas(width, height int) (h, w int) {
	best, found := 0.0, false
	up := false
	type canvas struct {
		h, w  int
		scale float64
	}
	var all []canvas
	for a := 1; a <= r.MaxTiles; a++ {
		for b := 1; b <= r.MaxTiles; b++ {
			if a*b > r.MaxTiles {
				continue
			}
			ch, cw := a*r.TileSize, b*r.TileSize
			sh, sw := float64(ch)/float64(height), float64(cw)/float64(width)
			s := sh
			if sw <= sh {
				s = sw
			}
			all = append(all, canvas{ch, cw, s})
		}
	}
	for _, c := range all {
		if c.scale >= 1 && (!up || c.scale < best) {
			best, up, found = c.scale, true, true
		}
	}
	if !up {
		for _, c := range all {
			if !found || c.scale > best {
				best, found = c.scale, true
			}
		}
	}
	area := 0
	for _, c := range all {
		if c.scale == best && (area == 0 || c.h*c.w < area) {
			h, w, area = c.h, c.w, c.h*c.w
		}
	}
	return h, w
}

// AudioRule is how a served model counts a clip's prompt tokens: TokensPerSecond of
// audio, rounded up.
type AudioRule struct {
	Name            string
	TokensPerSecond float64
}

// WhisperAudio is the rule of audio models with a Whisper-style encoder (Qwen2-Audio,
// Qwen2.5-Omni): 100 mel frames a second, halved by the encoder's stride and again by
// pooling, 25 tokens a second.
var WhisperAudio = AudioRule{Name: "whisper-25hz", TokensPerSecond: 25}

// Tokens returns ceil(d × TokensPerSecond), at least 1.
func (r AudioRule) Tokens(d time.Duration) int {
	n := int(math.Ceil(d.Seconds()*r.TokensPerSecond - 1e-9))
	return max(n, 1)
}

// ImageURLTokens counts an image_url part's tokens under rule: the URL must be a data
// URI holding a PNG or JPEG whose type matches the URI's (image/jpg is taken for
// image/jpeg). Remote URLs are an error: counting them would mean fetching them.
func ImageURLTokens(url string, rule ImageRule) (int, error) {
	if !strings.HasPrefix(url, "data:") {
		return 0, fmt.Errorf("media: only data URIs are counted (data:image/png;base64,…), not %.40q", url)
	}
	mime, data, err := ParseDataURI(url)
	if err != nil {
		return 0, err
	}
	info, err := DecodeImageInfo(data)
	if err != nil {
		return 0, err
	}
	if mime != info.Format.MIME() && !(mime == "image/jpg" && info.Format == JPEG) {
		return 0, fmt.Errorf("media: data URI says %s but the data is %s", mime, info.Format.MIME())
	}
	return rule.Tokens(info.Width, info.Height)
}

// InputAudioTokens counts an input_audio part's tokens under rule, from its format
// ("wav", "mp3") and base64 data, after checking the clip's headers.
func InputAudioTokens(format, b64 string, rule AudioRule) (int, error) {
	f, err := ParseAudioFormat(format)
	if err != nil {
		return 0, err
	}
	data, err := DecodeBase64(b64)
	if err != nil {
		return 0, err
	}
	info, err := DecodeAudioInfo(data, f)
	if err != nil {
		return 0, err
	}
	return rule.Tokens(info.Duration), nil
}
