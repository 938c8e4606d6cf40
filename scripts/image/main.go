// Command image builds perfgate's container image without a container daemon. With
// go-containerregistry it packs a static perfgate binary (CGO_ENABLED=0, GOOS=linux), the CA
// bundle and a passwd/group naming the non-root user perfgate (uid 65532) in one layer
// on an empty base, with perfgate as entrypoint, run as that user, labelled with the
// version, and writes it as an OCI image layout, in a tarball (an "OCI archive") or a
// directory.
//
//	go run ./scripts/image -o perfgate-image.tar              # make image
//	go run ./scripts/image -arch arm64 -tag v1.2.3 -o arm64.tar
//	go run ./scripts/image -layout out/oci                    # a layout directory
//
// The image is tagged imageref.Tag of the version the binary reports (`perfgate
// version`), the tag perfgate k8s defaults to; the layout's index names it in
// org.opencontainers.image.ref.name (the tag) and io.containerd.image.name (the full
// reference), so `skopeo copy oci-archive:perfgate-image.tar docker://REGISTRY/…`,
// `crane push` or `docker load` / `podman load` take it as is. The layer and config are
// reproducible: every timestamp is SOURCE_DATE_EPOCH (default 0). The Dockerfile at the
// repository root builds the same filesystem with a daemon.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/perfgate/perfgate/internal/imageref"
)

// The image's filesystem and user; the Dockerfile says the same (a test checks).
const (
	// UID and GID of the user perfgate ("nonroot" in distroless images).
	UID, GID = 65532, 65532
	User     = "perfgate"
	// Home is the user's home and the working directory: artifacts land there unless
	// --artifact-dir says otherwise (perfgate k8s mounts a volume at /artifacts).
	Home = "/home/perfgate"
	// Binary is the entrypoint.
	Binary = "/usr/local/bin/perfgate"
	// CABundle is where Go's crypto/x509 looks first on Linux.
	CABundle = "/etc/ssl/certs/ca-certificates.crt"
	// Source is the repository the image is built from (its source label).
	Source = "https://github.com/perfgate/perfgate"
)

// options are the command's flags.
type options struct {
	out, layoutDir string // OCI archive file, OCI layout directory
	arch           string // GOARCH of the binary and the image's platform
	binary         string // a prebuilt static linux binary instead of go build
	ca             string // the CA bundle to copy in
	tag            string // the image tag (default: imageref.Tag of the binary's version)
	module         string // the perfgate module root, where go build runs
	epoch          time.Time
}

func main() {
	o := options{epoch: time.Unix(0, 0).UTC()}
	flag.StringVar(&o.out, "o", "", "write the image as an OCI archive (a tarball of an OCI layout) to FILE")
	flag.StringVar(&o.layoutDir, "layout", "", "write the image into the OCI layout directory DIR (created or appended to)")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "GOARCH of the binary and the image")
	flag.StringVar(&o.binary, "binary", "", "pack this static linux binary instead of building ./cmd/perfgate (needs -tag unless it runs here)")
	flag.StringVar(&o.ca, "ca", CABundle, "CA bundle (PEM) to copy to "+CABundle)
	flag.StringVar(&o.tag, "tag", "", "image tag (default: the tag of the binary's version, as perfgate k8s names it)")
	flag.StringVar(&o.module, "C", ".", "root of the perfgate module")
	flag.Parse()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "image: SOURCE_DATE_EPOCH=%q: want seconds since 1970\n", s)
			os.Exit(2)
		}
		o.epoch = time.Unix(n, 0).UTC()
	}
	if flag.NArg() > 0 || (o.out == "" && o.layoutDir == "") {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/image (-o FILE.tar | -layout DIR) [-arch GOARCH] [-tag TAG] [-binary FILE] [-ca FILE]")
		os.Exit(2)
	}
	ref, err := build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Println(ref)
}

// build builds the image o describes, writes it, and returns its reference.
func build(o options) (string, error) {
	tmp, err := os.MkdirTemp("", "perfgate-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	bin := o.binary
	if bin == "" {
		bin = filepath.Join(tmp, "perfgate")
		if err := goBuild(o.module, o.arch, bin); err != nil {
			return "", err
		}
	}
	version, revision := "", ""
	if runtime.GOOS == "linux" && o.arch == runtime.GOARCH {
		out, err := exec.Command(bin, "version").Output()
		if err != nil && o.tag == "" {
			return "", fmt.Errorf("%s version: %w (or pass -tag)", bin, err)
		}
		if err == nil {
			version, revision = parseVersion(string(out))
		}
	}
	tag := o.tag
	if tag == "" {
		if version == "" {
			return "", fmt.Errorf("cannot run a linux/%s binary on %s/%s to read its version: pass -tag", o.arch, runtime.GOOS, runtime.GOARCH)
		}
		tag = imageref.Tag(version)
	}
	if version == "" {
		version = tag
	}
	ref := imageref.Repository + ":" + tag
	binData, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	ca, err := os.ReadFile(o.ca)
	if err != nil {
		return "", fmt.Errorf("CA bundle: %w (install ca-certificates, or pass -ca)", err)
	}
	img, err := Image(binData, ca, o.arch, version, revision, o.epoch)
	if err != nil {
		return "", err
	}
	if o.layoutDir != "" {
		if err := writeLayout(o.layoutDir, img, tag, ref); err != nil {
			return "", err
		}
	}
	if o.out != "" {
		dir := filepath.Join(tmp, "layout")
		if err := writeLayout(dir, img, tag, ref); err != nil {
			return "", err
		}
		if err := tarDir(dir, o.out, o.epoch); err != nil {
			return "", err
		}
	}
	return ref, nil
}

// goBuild builds a static perfgate for linux/arch into dst.
func goBuild(module, arch, dst string) error {
	// -buildvcs=auto overrides a GOFLAGS=-buildvcs=false: the commit, stamped into the
	// binary, names the image of a development build (sha-<commit>) and its revision label.
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=auto", "-ldflags=-s -w", "-o", dst, "./cmd/perfgate")
	cmd.Dir = module
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/perfgate (CGO_ENABLED=0 GOOS=linux GOARCH=%s): %w", arch, err)
	}
	return nil
}

// parseVersion reads `perfgate version`'s output: "perfgate VERSION (go…, os/arch)" and
// optionally "revision REV (…)".
func parseVersion(out string) (version, revision string) {
	for line := range strings.SplitSeq(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "perfgate "); ok && version == "" {
			if i := strings.LastIndex(rest, " ("); i >= 0 {
				rest = rest[:i]
			}
			version = strings.TrimSpace(rest)
		}
		if rest, ok := strings.CutPrefix(line, "revision "); ok {
			revision, _, _ = strings.Cut(rest, " ")
		}
	}
	return version, revision
}

// Image is perfgate's image: one layer (Files) on an empty base, entrypoint Binary,
// user UID:GID, working directory Home, OCI media types.
func Image(binary, ca []byte, arch, version, revision string, epoch time.Time) (v1.Image, error) {
	layerTar, err := Files(binary, ca, epoch)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	labels := map[string]string{
		"org.opencontainers.image.title":       "perfgate",
		"org.opencontainers.image.description": "perfgate: performance tests and regression gates for LLM serving",
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.version":     version,
	}
	if revision != "" {
		labels["org.opencontainers.image.revision"] = revision
	}
	cf := &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Created:      v1.Time{Time: epoch},
		Config: v1.Config{
			Entrypoint: []string{Binary},
			User:       fmt.Sprintf("%d:%d", UID, GID),
			WorkingDir: Home,
			Env:        []string{"PATH=/usr/local/bin", "HOME=" + Home, "SSL_CERT_FILE=" + CABundle},
			Labels:     labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img, err := mutate.ConfigFile(empty.Image, cf)
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	return mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "scripts/image", Comment: "perfgate, CA bundle, passwd"},
	})
}

// Files is the image's one layer, an uncompressed tar: the directories, passwd and
// group with root and perfgate, the CA bundle and the binary, every entry timed epoch.
func Files(binary, ca []byte, epoch time.Time) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", User, UID, GID, User, Home)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", User, GID)
	type entry struct {
		name     string
		mode     int64
		uid, gid int
		data     []byte // nil: a directory
	}
	entries := []entry{
		{"etc/", 0o755, 0, 0, nil},
		{"etc/group", 0o644, 0, 0, []byte(group)},
		{"etc/passwd", 0o644, 0, 0, []byte(passwd)},
		{"etc/ssl/", 0o755, 0, 0, nil},
		{"etc/ssl/certs/", 0o755, 0, 0, nil},
		{strings.TrimPrefix(CABundle, "/"), 0o644, 0, 0, ca},
		{"home/", 0o755, 0, 0, nil},
		{strings.TrimPrefix(Home, "/") + "/", 0o755, UID, GID, nil},
		{"tmp/", 0o1777, 0, 0, nil},
		{"usr/", 0o755, 0, 0, nil},
		{"usr/local/", 0o755, 0, 0, nil},
		{"usr/local/bin/", 0o755, 0, 0, nil},
		{strings.TrimPrefix(Binary, "/"), 0o755, 0, 0, binary},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: epoch, Format: tar.FormatPAX}
		if e.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeLayout appends img to the OCI layout at dir (created when missing), naming it
// tag and ref in the index.
func writeLayout(dir string, img v1.Image, tag, ref string) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return fmt.Errorf("OCI layout %s: %w", dir, err)
		}
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag,
		"io.containerd.image.name":          ref,
	}))
}

// tarDir writes the tree at dir as a tar file dst (an OCI archive when dir is a
// layout), entries sorted and timed epoch so the file is reproducible.
func tarDir(dir, dst string, epoch time.Time) (err error) {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		name, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		name = filepath.ToSlash(name)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: name + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch})
		}
		if !d.Type().IsRegular() {
			return errors.New(path + ": not a regular file")
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
