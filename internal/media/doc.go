// Package media makes and checks the images and audio clips of multimodal workloads.
// The load generator draws synthetic media with it and the mock server validates what
// it receives with it, so both sides share one definition of each format and of each
// model's media-token rule.
//
// Generation is deterministic (a seed gives the same bytes) and lazy: an image or clip
// is made when a request is built and dropped with it, so a run never holds all its
// media. Content is cheap and synthetic — a colour gradient with seeded noise for
// images, a seeded tone with noise for WAV, silent frames for MP3 — because only
// the size and duration matter to a server's cost.
//
//	uri, _ := media.AppendImageDataURI(nil, media.PNG, 640, 480, seed) // "data:image/png;base64,…"
//	info, _ := media.DecodeImageInfo(data)                            // format, width, height
//
// Formats: PNG and JPEG images (image/png, image/jpeg); WAV (PCM, 16-bit) and MP3
// (MPEG-1/2/2.5 Layer III) audio. MP3 is written as silent frames: no pure-Go MP3
// encoder is available to the project, and silent Layer III frames are valid MP3 that
// every decoder reads, with an exact duration (whole 1152- or 576-sample frames).
//
// Token rules ([ImageRule], [AudioRule]) say how many prompt tokens a served model
// counts for one image or clip; docs/multimodal.md states them with their sources.
package media
