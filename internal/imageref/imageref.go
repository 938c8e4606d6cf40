// Package imageref names perfgate's container image. It is the one definition of its
// repository and of the tag a perfgate version is published under. perfgate k8s
// defaults to the reference of its own version, and scripts/image tags the image it
// builds with the reference of the binary it packs, so the two agree.
package imageref

import (
	"regexp"
	"strings"
)

// Repository is where perfgate's images are published.
const Repository = "ghcr.io/perfgate/perfgate"

// Latest is the tag of a build that carries no version of its own (a dirty tree, or no
// VCS information).
const Latest = "latest"

// semver matches a Go module version: a release (v1.2.3), a pre-release or a
// pseudo-version (v0.0.0-20260101000000-abcdef123456), optionally +incompatible.
var semver = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+incompatible)?$`)

// revision matches reportgen.ModuleVersion's form of a clean development build:
// "devel" and the first 12 hex digits of its commit.
var revision = regexp.MustCompile(`^devel ([0-9a-f]{12})$`)

// Tag is the image tag of version, a version as reportgen.ModuleVersion (and
// `perfgate version`) prints it:
//
//   - a module version (v1.2.3, a pre-release, a pseudo-version) is its own tag, "+"
//     (not allowed in a tag) written "_";
//   - a development build of a clean tree, "devel 0123456789ab", is "sha-0123456789ab";
//   - anything else (a modified tree, no VCS stamp) is "latest".
func Tag(version string) string {
	version = strings.TrimSpace(version)
	if semver.MatchString(version) {
		return strings.ReplaceAll(version, "+", "_")
	}
	if m := revision.FindStringSubmatch(version); m != nil {
		return "sha-" + m[1]
	}
	return Latest
}

// Ref is the full image reference of version: Repository:Tag(version).
func Ref(version string) string {
	return Repository + ":" + Tag(version)
}
