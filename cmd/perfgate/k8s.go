package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/imageref"
	"github.com/perfgate/perfgate/reportgen"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// Defaults of perfgate k8s.
const (
	DefaultK8sName = "perfgate"
	DefaultK8sPVC  = "perfgate-artifacts"
	DefaultK8sPort = 7070
	// k8sArtifacts is where the artifact volume is mounted in every pod.
	k8sArtifacts = "/artifacts"
)

// DefaultK8sImage is perfgate k8s's default --image: the published image of this
// binary's own version (imageref.Tag: v1.2.3 for a release, sha-<commit> for a clean
// development build, latest otherwise), the image scripts/image tags it with.
var DefaultK8sImage = imageref.Ref(reportgen.ModuleVersion())

// k8sFlags are perfgate k8s's own flags; every other flag is profile's, passed to
// the shards as given.
type k8sFlags struct {
	name, namespace, image, pvc string
	port                        int
	mergeWait                   time.Duration
}

// k8sOnly are the flags the manifest sets itself (or k8s's own): not passed through.
var k8sOnly = map[string]bool{
	"job-name": true, "namespace": true, "image": true, "pvc": true, "coordinator-port": true, "merge-wait": true,
	"shards": true, "shard-index": true, "coordinator": true, "coordinator-listen": true, "artifact-dir": true, "start-at": true,
}

// cmdK8s prints a manifest that runs the profile its flags describe as N shards on
// Kubernetes and gates it once:
//
//   - a headless Service <name> selecting the shard pods, so shard 0 has the stable
//     name <name>-0.<name> (pod hostname <name>-<index>, subdomain <name>);
//   - an Indexed Job <name> (completionMode Indexed, completions = parallelism = N,
//     no retries: a retried shard would send its part twice) whose pods run
//     `perfgate profile … --shards N` with the index Kubernetes sets in
//     JOB_COMPLETION_INDEX; shard 0 serves the start barrier on the coordinator port
//     and every shard registers with http://<name>-0.<name>:PORT; artifacts go to
//     /artifacts/<name>/shard-I on the volume claim --pvc (ReadWriteMany when the
//     pods may land on several nodes);
//   - a Job <name>-merge that waits for every shard's directory to be complete, then
//     runs `perfgate merge`: its exit code is the gate (0 pass, 99 an objective failed,
//     1 the run failed, 2 the shards do not make one run), so
//     `kubectl wait --for=condition=complete job/<name>-merge` succeeds only when the
//     gate passes. A shard's own exit code does not gate (its verdicts cover its part).
func cmdK8s(ctx context.Context, e *env, args []string) error {
	var f profileFlags
	var o profileOpts
	var k k8sFlags
	fs := newFlags(e, "k8s", "--shards N [profile flags] [--image IMAGE] [--pvc CLAIM] [--job-name NAME]")
	registerProfileFlags(fs, &f, &o)
	fs.StringVar(&k.name, "job-name", DefaultK8sName, "name of the Job, its Service and the merge Job <name>-merge")
	fs.StringVar(&k.namespace, "namespace", "", "namespace of every object (default: kubectl's)")
	fs.StringVar(&k.image, "image", DefaultK8sImage, "container image with the perfgate binary as entrypoint")
	fs.StringVar(&k.pvc, "pvc", DefaultK8sPVC, "PersistentVolumeClaim holding the artifacts (ReadWriteMany across nodes)")
	fs.IntVar(&k.port, "coordinator-port", DefaultK8sPort, "port of shard 0's start barrier")
	fs.DurationVar(&k.mergeWait, "merge-wait", 2*time.Hour, "how long the merge Job waits for the shards")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.shard.shards < 1 {
		return invalidf("--shards N is required (N >= 1)")
	}
	if k.name == "" || len(k.name) > 50 || strings.ToLower(k.name) != k.name {
		return invalidf("--job-name %q: want a lowercase DNS label of at most 50 characters", k.name)
	}
	// Check the profile now, as shard 0 would run it: a manifest for an invalid run is
	// an error here, not N failed pods.
	check := o
	check.shard.index = 0
	sc, err := buildScenario(fs, &f, &check)
	if err != nil {
		return err
	}
	if err := applyShardFlags(&sc, &check); err != nil {
		return err
	}
	pass, err := passThrough(fs, args)
	if err != nil {
		return err
	}
	objs := k8sManifest(k, o.shard.shards, pass)
	return writeManifest(e.stdout, objs)
}

// passThrough returns args without the flags the manifest sets itself.
func passThrough(fs *flag.FlagSet, args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			out = append(out, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		fl := fs.Lookup(name)
		isBool := false
		if fl != nil {
			if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				isBool = true
			}
		}
		takesNext := !hasValue && !isBool && i+1 < len(args)
		if k8sOnly[name] {
			if takesNext {
				i++
			}
			continue
		}
		out = append(out, a)
		if takesNext {
			i++
			out = append(out, args[i])
		}
	}
	return out, nil
}

func k8sManifest(k k8sFlags, shards int, pass []string) []any {
	n := int32(shards)
	zero := int32(0)
	labels := map[string]string{"app.kubernetes.io/name": "perfgate", "app.kubernetes.io/instance": k.name}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: k.namespace, Labels: labels}
	}
	vol := corev1.Volume{Name: "artifacts", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: k.pvc},
	}}
	mount := corev1.VolumeMount{Name: "artifacts", MountPath: k8sArtifacts}
	root := k8sArtifacts + "/" + k.name
	coord := fmt.Sprintf("http://%s-0.%s:%d", k.name, k.name, k.port)
	shardArgs := append([]string{"profile"}, pass...)
	shardArgs = append(shardArgs,
		"--shards", strconv.Itoa(shards),
		"--coordinator", coord,
		"--coordinator-listen", ":"+strconv.Itoa(k.port),
		"--artifact-dir", root,
	)
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(k.name),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{"job-name": k.name}, // set on a Job's pods
			// Shard 0 must be resolvable before it is ready: the barrier is how the
			// shards become ready together.
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{{
				Name: "coordinator", Port: int32(k.port), TargetPort: intstr.FromInt32(int32(k.port)),
			}},
		},
	}
	indexed := batchv1.IndexedCompletion
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(k.name),
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed,
			Completions:    &n,
			Parallelism:    &n,
			BackoffLimit:   &zero, // a retried shard would send its part twice
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Subdomain:     k.name, // <name>-<index>.<name>: the Service's DNS
					Containers: []corev1.Container{{
						Name:  "shard",
						Image: k.image,
						Args:  shardArgs,
						Env: []corev1.EnvVar{{
							// Kubernetes sets it in Indexed Jobs; spelled out for clusters
							// that only annotate the pod.
							Name: "JOB_COMPLETION_INDEX",
							ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
								FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
							}},
						}},
						Ports:        []corev1.ContainerPort{{Name: "coordinator", ContainerPort: int32(k.port)}},
						VolumeMounts: []corev1.VolumeMount{mount},
					}},
					Volumes: []corev1.Volume{vol},
				},
			},
		},
	}
	merge := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(k.name + "-merge"),
		Spec: batchv1.JobSpec{
			BackoffLimit: &zero, // its exit code is the gate: never retried into a pass
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:         "merge",
						Image:        k.image,
						Args:         []string{"merge", "--wait", k.mergeWait.String(), "--artifact-dir", root + "/merged", root},
						VolumeMounts: []corev1.VolumeMount{mount},
					}},
					Volumes: []corev1.Volume{vol},
				},
			},
		},
	}
	return []any{svc, job, merge}
}

// writeManifest writes objs as YAML documents.
func writeManifest(w io.Writer, objs []any) error {
	for i, obj := range objs {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return runtimef("k8s: %v", err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return runtimef("k8s: %v", err)
			}
		}
		if _, err := w.Write(b); err != nil {
			return runtimef("k8s: %v", err)
		}
	}
	return nil
}
