package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/imageref"
	"github.com/perfgate/perfgate/reportgen"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestK8sManifest: perfgate k8s prints a headless Service, an Indexed Job of N shards
// and a merge Job, each decoding strictly (unknown fields rejected) into the
// Kubernetes API types, wired together: the Job's pods are the Service's subdomain,
// the shards register with <job>-0.<service>, shards and merge share the artifact
// volume, and the profile flags reach the shards as given.
func TestK8sManifest(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"k8s", "--mock", "--shards", "4", "--concurrency", "8", "--request-count", "400",
		"--assert", "ttft_p99<=250ms", "--job-name", "bench", "--pvc", "shared", "--artifact-dir", "ignored"}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("perfgate k8s exit %d: %s", code, errb.String())
	}
	docs := strings.Split(out.String(), "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("%d YAML documents; want 3 (Service, Job, merge Job)", len(docs))
	}
	var svc corev1.Service
	var job, merge batchv1.Job
	for i, dst := range []any{&svc, &job, &merge} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]), dst); err != nil {
			t.Fatalf("document %d does not decode strictly: %v", i, err)
		}
	}
	if svc.Kind != "Service" || svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Name != "bench" {
		t.Errorf("Service: kind %q clusterIP %q name %q; want a headless Service named bench", svc.Kind, svc.Spec.ClusterIP, svc.Name)
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 || *s.BackoffLimit != 0 {
		t.Errorf("Job spec %+v; want Indexed, completions = parallelism = 4, no retries", s)
	}
	pod := s.Template.Spec
	if pod.Subdomain != svc.Name {
		t.Errorf("pod subdomain %q; want the Service %q (stable DNS <job>-0.<service>)", pod.Subdomain, svc.Name)
	}
	args := pod.Containers[0].Args
	for _, want := range [][]string{{"profile"}, {"--shards", "4"}, {"--coordinator", "http://bench-0.bench:7070"}, {"--coordinator-listen", ":7070"}, {"--artifact-dir", "/artifacts/bench"}, {"--assert", "ttft_p99<=250ms"}, {"--concurrency", "8"}} {
		if i := slices.Index(args, want[0]); i < 0 || !slices.Equal(args[i:i+len(want)], want) {
			t.Errorf("shard args %q lack %q", args, want)
		}
	}
	if slices.Contains(args, "ignored") || slices.Contains(args, "--pvc") {
		t.Errorf("shard args %q carry the k8s command's own flags", args)
	}
	margs := merge.Spec.Template.Spec.Containers[0].Args
	if margs[0] != "merge" || !slices.Contains(margs, "/artifacts/bench/merged") || margs[len(margs)-1] != "/artifacts/bench" {
		t.Errorf("merge args %q; want merge --artifact-dir /artifacts/bench/merged /artifacts/bench", margs)
	}
	for _, p := range []corev1.PodSpec{pod, merge.Spec.Template.Spec} {
		if p.Volumes[0].PersistentVolumeClaim == nil || p.Volumes[0].PersistentVolumeClaim.ClaimName != "shared" {
			t.Errorf("volume %+v; want the claim shared", p.Volumes[0])
		}
	}
	// Without --image, every pod runs the image of this binary's own version; with it,
	// the image given.
	for _, p := range []corev1.PodSpec{pod, merge.Spec.Template.Spec} {
		if got, want := p.Containers[0].Image, imageref.Ref(reportgen.ModuleVersion()); got != want {
			t.Errorf("default image %q; want this version's %q", got, want)
		}
	}
	out.Reset()
	if code := run(context.Background(), []string{"k8s", "--mock", "--shards", "2", "--concurrency", "2", "--image", "my/perfgate:v9"}, &out, &errb); code != ExitOK {
		t.Fatalf("perfgate k8s --image exit %d: %s", code, errb.String())
	}
	if n := strings.Count(out.String(), "image: my/perfgate:v9"); n != 2 {
		t.Errorf("--image my/perfgate:v9 set %d containers' image; want 2 (shards, merge)", n)
	}
	// The strict decoding can fail: an unknown field is rejected.
	bad := strings.Replace(docs[1], "completionMode:", "completionMod:", 1)
	if err := yaml.UnmarshalStrict([]byte(bad), &batchv1.Job{}); err == nil {
		t.Error("a Job with an unknown field decoded strictly")
	}
}

// TestK8sRefusesUnsplittable: a profile that cannot be split gets no manifest (exit 2).
func TestK8sRefusesUnsplittable(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"k8s", "--mock", "--shards", "4", "--concurrency", "2", "--request-count", "10"}, &out, &errb)
	if code != ExitInvalidConfig || !strings.Contains(errb.String(), "without a worker") {
		t.Errorf("exit %d, stderr %q; want 2 saying shards are left without a worker", code, errb.String())
	}
}
