package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/imageref"
	"github.com/perfgate/perfgate/internal/testutil"
)

// ociImage is an image read back from an OCI archive by hand (stdlib only, so the
// check does not trust the library that wrote it).
type ociImage struct {
	refName, fullName string // the index's ref.name and io.containerd.image.name
	manifestType      string
	config            struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		Config       struct {
			Entrypoint []string          `json:"Entrypoint"`
			User       string            `json:"User"`
			WorkingDir string            `json:"WorkingDir"`
			Env        []string          `json:"Env"`
			Labels     map[string]string `json:"Labels"`
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	layers [][]byte // uncompressed layer tars, in order
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

// readOCI reads the one image in an OCI archive, checking every blob's digest and size
// and every layer's diff ID.
func readOCI(archive []byte) (*ociImage, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			files[h.Name] = b
		}
	}
	if layout := string(files["oci-layout"]); !strings.Contains(layout, `"imageLayoutVersion"`) {
		return nil, fmt.Errorf("oci-layout %q: not an OCI layout", layout)
	}
	blob := func(d descriptor) ([]byte, error) {
		hexd, ok := strings.CutPrefix(d.Digest, "sha256:")
		if !ok {
			return nil, fmt.Errorf("digest %q: want sha256", d.Digest)
		}
		b, ok := files["blobs/sha256/"+hexd]
		if !ok {
			return nil, fmt.Errorf("blob %s missing", d.Digest)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexd || int64(len(b)) != d.Size {
			return nil, fmt.Errorf("blob %s: content does not match its digest or size %d", d.Digest, d.Size)
		}
		return b, nil
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("index.json: %d manifests, want 1", len(index.Manifests))
	}
	img := &ociImage{refName: index.Manifests[0].Annotations["org.opencontainers.image.ref.name"], fullName: index.Manifests[0].Annotations["io.containerd.image.name"]}
	mb, err := blob(index.Manifests[0])
	if err != nil {
		return nil, err
	}
	var manifest struct {
		MediaType string       `json:"mediaType"`
		Config    descriptor   `json:"config"`
		Layers    []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(mb, &manifest); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	img.manifestType = manifest.MediaType
	cb, err := blob(manifest.Config)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(cb, &img.config); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(manifest.Layers) != len(img.config.RootFS.DiffIDs) {
		return nil, fmt.Errorf("%d layers, %d diff IDs", len(manifest.Layers), len(img.config.RootFS.DiffIDs))
	}
	for i, l := range manifest.Layers {
		lb, err := blob(l)
		if err != nil {
			return nil, err
		}
		if l.MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
			return nil, fmt.Errorf("layer %d media type %q", i, l.MediaType)
		}
		zr, err := gzip.NewReader(bytes.NewReader(lb))
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		if sum := sha256.Sum256(raw); "sha256:"+hex.EncodeToString(sum[:]) != img.config.RootFS.DiffIDs[i] {
			return nil, fmt.Errorf("layer %d: uncompressed content does not match diff ID %s", i, img.config.RootFS.DiffIDs[i])
		}
		img.layers = append(img.layers, raw)
	}
	return img, nil
}

// extract unpacks the image's layers into root (a fresh directory), with their modes,
// and owners when running as root; it returns the headers by path.
func extract(img *ociImage, root string) (map[string]*tar.Header, error) {
	headers := map[string]*tar.Header{}
	for _, l := range img.layers {
		tr := tar.NewReader(bytes.NewReader(l))
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			name := strings.TrimSuffix(h.Name, "/")
			if !filepath.IsLocal(name) {
				return nil, fmt.Errorf("layer entry %q escapes the root", h.Name)
			}
			headers[name] = h
			dst := filepath.Join(root, name)
			switch h.Typeflag {
			case tar.TypeDir:
				if err := os.MkdirAll(dst, 0o755); err != nil {
					return nil, err
				}
			case tar.TypeReg:
				b, err := io.ReadAll(tr)
				if err != nil {
					return nil, err
				}
				if err := os.WriteFile(dst, b, 0o600); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("layer entry %q: type %c", h.Name, h.Typeflag)
			}
			if err := os.Chmod(dst, os.FileMode(h.Mode).Perm()|modeBits(h.Mode)); err != nil {
				return nil, err
			}
			if os.Getuid() == 0 {
				if err := os.Lchown(dst, h.Uid, h.Gid); err != nil {
					return nil, err
				}
			}
		}
	}
	return headers, nil
}

func modeBits(m int64) os.FileMode {
	if m&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// buildArchive runs the image build with o, writing an OCI archive in a temporary
// directory, and reads it back.
func buildArchive(t *testing.T, o options) (string, *ociImage) {
	t.Helper()
	o.out = filepath.Join(t.TempDir(), "image.tar")
	ref, err := build(o)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	b, err := os.ReadFile(o.out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := readOCI(b)
	if err != nil {
		t.Fatalf("the OCI archive does not read back: %v", err)
	}
	return ref, img
}

// TestImageFilesystem: the image holds the binary (entrypoint, 0755), the CA bundle,
// and a passwd naming the non-root user the config runs as, whose home is the working
// directory it owns; the tag is the one perfgate k8s names for the binary's version.
// The "binary" is a script answering `version` as perfgate does, so no go build runs.
func TestImageFilesystem(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("runs the stand-in binary as a linux one")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "perfgate")
	script := "#!/bin/sh\necho 'perfgate v1.2.3 (go1.26.0, linux/" + runtime.GOARCH + ")'\necho 'revision 0123456789abcdef0123456789abcdef01234567 (clean tree, committed 2026-01-01T00:00:00Z)'\n"
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	epoch := time.Unix(1767225600, 0).UTC()
	ref, img := buildArchive(t, options{binary: bin, ca: ca, arch: runtime.GOARCH, epoch: epoch})
	if want := imageref.Ref("v1.2.3"); ref != want || img.fullName != want || img.refName != "v1.2.3" {
		t.Errorf("reference %q, index names %q / %q; want %q (perfgate k8s's default for v1.2.3)", ref, img.fullName, img.refName, want)
	}
	if img.manifestType != "application/vnd.oci.image.manifest.v1+json" {
		t.Errorf("manifest media type %q; want OCI", img.manifestType)
	}
	c := img.config
	if c.OS != "linux" || c.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s; want linux/%s", c.OS, c.Architecture, runtime.GOARCH)
	}
	if !slices.Equal(c.Config.Entrypoint, []string{Binary}) || c.Config.User != "65532:65532" || c.Config.WorkingDir != Home {
		t.Errorf("entrypoint %q user %q workdir %q; want [%s] 65532:65532 %s", c.Config.Entrypoint, c.Config.User, c.Config.WorkingDir, Binary, Home)
	}
	if !slices.Contains(c.Config.Env, "SSL_CERT_FILE="+CABundle) {
		t.Errorf("env %q lacks SSL_CERT_FILE=%s", c.Config.Env, CABundle)
	}
	for k, v := range map[string]string{"org.opencontainers.image.version": "v1.2.3", "org.opencontainers.image.revision": "0123456789abcdef0123456789abcdef01234567", "org.opencontainers.image.source": Source} {
		if c.Config.Labels[k] != v {
			t.Errorf("label %s = %q; want %q", k, c.Config.Labels[k], v)
		}
	}
	root := t.TempDir()
	headers, err := extract(img, root)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		mode     int64
		uid, gid int
		from     string
	}{
		"usr/local/bin/perfgate":            {0o755, 0, 0, bin},
		"etc/ssl/certs/ca-certificates.crt": {0o644, 0, 0, ca},
		"home/perfgate":                     {0o755, UID, GID, ""},
		"tmp":                               {0o1777, 0, 0, ""},
	} {
		h := headers[name]
		if h == nil {
			t.Errorf("%s missing from the layer", name)
			continue
		}
		if h.Mode != want.mode || h.Uid != want.uid || h.Gid != want.gid || !h.ModTime.Equal(epoch) {
			t.Errorf("%s: mode %o uid %d gid %d time %v; want %o %d %d %v", name, h.Mode, h.Uid, h.Gid, h.ModTime, want.mode, want.uid, want.gid, epoch)
		}
		if want.from != "" {
			got, _ := os.ReadFile(filepath.Join(root, name))
			src, _ := os.ReadFile(want.from)
			if !bytes.Equal(got, src) {
				t.Errorf("%s is not a copy of %s", name, want.from)
			}
		}
	}
	passwd, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if !strings.Contains(string(passwd), "\nperfgate:x:65532:65532:perfgate:/home/perfgate:") {
		t.Errorf("/etc/passwd %q does not name perfgate as uid 65532 with home %s", passwd, Home)
	}
	// Reproducible: the same inputs give the same archive.
	_, again := buildArchive(t, options{binary: bin, ca: ca, arch: runtime.GOARCH, epoch: epoch})
	if !slices.EqualFunc(img.layers, again.layers, bytes.Equal) || img.config.RootFS.DiffIDs[0] != again.config.RootFS.DiffIDs[0] {
		t.Error("two builds of the same inputs differ")
	}
}

// TestReadOCIRejectsCorruptBlob: the read-back check can fail: a blob whose bytes no
// longer match its digest is refused.
func TestReadOCIRejectsCorruptBlob(t *testing.T) {
	layer, err := Files([]byte("bin"), []byte("ca"), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	img, err := Image([]byte("bin"), []byte("ca"), "amd64", "v1.0.0", "", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "layout")
	if err := writeLayout(dir, img, "v1.0.0", imageref.Ref("v1.0.0")); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "a.tar")
	if err := tarDir(dir, archive, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(archive)
	got, err := readOCI(good)
	if err != nil {
		t.Fatalf("intact archive: %v", err)
	}
	if !bytes.Equal(got.layers[0], layer) {
		t.Error("the layer read back is not the one written")
	}
	// Flip one byte of the config blob (JSON text: find "amd64").
	i := bytes.Index(good, []byte(`"amd64"`))
	if i < 0 {
		t.Fatal("config not found in the archive")
	}
	bad := slices.Clone(good)
	bad[i+1] = 'x'
	if _, err := readOCI(bad); err == nil || !strings.Contains(err.Error(), "does not match its digest") {
		t.Errorf("corrupt config blob: err %v; want a digest mismatch", err)
	}
}

// TestTagNeedsAVersion: a binary that cannot be run here (cross-built, or not a
// program) needs -tag; the error says so.
func TestTagNeedsAVersion(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "perfgate")
	if err := os.WriteFile(bin, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	_, err := build(options{binary: bin, arch: other, ca: bin, out: filepath.Join(dir, "x.tar")})
	if err == nil || !strings.Contains(err.Error(), "pass -tag") {
		t.Errorf("cross-arch binary without -tag: err %v; want one asking for -tag", err)
	}
	if _, err := build(options{binary: bin, arch: other, ca: bin, tag: "v0.0.1", out: filepath.Join(dir, "x.tar")}); err != nil {
		t.Errorf("with -tag: %v", err)
	}
}

// TestDockerfileMatches: the Dockerfile (for builds with a daemon) builds the same
// filesystem as scripts/image: a static binary at the same path, the same user, the CA
// bundle, the same working directory.
func TestDockerfileMatches(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{
		"CGO_ENABLED=0",
		"FROM scratch",
		"USER " + strconv.Itoa(UID) + ":" + strconv.Itoa(GID),
		`ENTRYPOINT ["` + Binary + `"]`,
		"WORKDIR " + Home,
		CABundle,
		"perfgate:x:" + strconv.Itoa(UID) + ":" + strconv.Itoa(GID) + ":perfgate:" + Home + ":",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

// TestImageRunsVersion builds the real image (go build of a static perfgate), unpacks
// its layers into a directory and runs the entrypoint's `perfgate version` from it:
// as root, chrooted into the unpacked filesystem as the image's user (uid 65532), so
// nothing of the host is used; otherwise from the directory as the current user.
func TestImageRunsVersion(t *testing.T) {
	testutil.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux/" + runtime.GOARCH + "; this host cannot run it")
	}
	if _, err := os.Stat(CABundle); err != nil {
		testutil.Missing(t, "the CA bundle "+CABundle+" (Debian package ca-certificates)")
	}
	ref, img := buildArchive(t, options{module: "../..", arch: runtime.GOARCH, ca: CABundle, epoch: time.Unix(0, 0)})
	root := filepath.Join(t.TempDir(), "rootfs")
	if _, err := extract(img, root); err != nil {
		t.Fatal(err)
	}
	// t.TempDir is 0700: let the image's user reach the root.
	for d := root; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var cmd *exec.Cmd
	if os.Getuid() == 0 {
		cmd = exec.Command(Binary, "version")
		cmd.Dir = "/"
		cmd.Env = img.config.Config.Env
		var uid, gid uint32
		if _, err := fmt.Sscanf(img.config.Config.User, "%d:%d", &uid, &gid); err != nil {
			t.Fatalf("config user %q: %v", img.config.Config.User, err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	} else {
		cmd = exec.Command(filepath.Join(root, Binary), "version")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("perfgate version from the image: %v\n%s", err, out)
	}
	version, _ := parseVersion(string(out))
	if version == "" || !strings.HasSuffix(ref, ":"+imageref.Tag(version)) {
		t.Errorf("perfgate version printed %q; the image is %s, want the tag of that version", out, ref)
	}
	if !strings.Contains(string(out), "linux/"+runtime.GOARCH) {
		t.Errorf("perfgate version %q: not a linux/%s build", out, runtime.GOARCH)
	}
	t.Logf("%s: %s", ref, strings.TrimSpace(string(out)))
}
