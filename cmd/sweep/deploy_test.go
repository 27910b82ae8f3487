package main

// The files of deploy/ are tested as a cluster would use them: every
// Kubernetes manifest is decoded strictly (an unknown or misspelt field
// fails) into the API's own types and checked for the properties the
// nightly job relies on, then its containers are run here as the kubelet
// would run them — the real sweep (this test binary standing in for it),
// $(VAR) expanded, the volumes' mount paths mapped to temporary folders,
// the ConfigMap's files where it is mounted. The Slurm scripts run under a
// fake sbatch that runs each job at once, in a copy as Slurm does, with
// the environment of an array task.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// kustomization is the part of kustomize's Kustomization that deploy/ uses;
// decoded strictly, a field kustomize would read and this test would not
// fails.
type kustomization struct {
	APIVersion         string   `json:"apiVersion"`
	Kind               string   `json:"kind"`
	Resources          []string `json:"resources"`
	ConfigMapGenerator []struct {
		Name  string   `json:"name"`
		Files []string `json:"files"`
	} `json:"configMapGenerator"`
	GeneratorOptions struct {
		DisableNameSuffixHash bool `json:"disableNameSuffixHash"`
	} `json:"generatorOptions"`
}

// deploy is deploy/ decoded.
type deploy struct {
	dir     string
	kust    kustomization
	config  map[string]string // the ConfigMap's keys → files
	cmName  string
	pvc     corev1.PersistentVolumeClaim
	job     batchv1.Job
	cronJob batchv1.CronJob
}

// decodeStrict decodes a YAML file into v as the API server's strict
// field validation does — a field unknown, misspelt, in the wrong case or
// given twice fails — and checks its apiVersion and kind.
func decodeStrict(t *testing.T, path, apiVersion, kind string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if i := strings.LastIndex(path, "/deploy/"); i >= 0 {
		path = path[i+1:] // deploy/… in messages
	}
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSONStrict(b) // a key twice in a mapping fails
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// as the API server decodes: field names case-sensitive, an unknown
	// or duplicate field an error
	strict, err := kjson.UnmarshalStrict(j, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil || len(strict) > 0 {
		t.Fatalf("%s: %v", path, errors.Join(append([]error{err}, strict...)...))
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(b, &tm); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if tm.APIVersion != apiVersion || tm.Kind != kind {
		t.Fatalf("%s: %s %s, want %s %s", path, tm.APIVersion, tm.Kind, apiVersion, kind)
	}
}

func loadDeploy(t *testing.T) *deploy {
	t.Helper()
	d := &deploy{dir: filepath.Join(repoRoot(t), "deploy"), config: map[string]string{}}
	decodeStrict(t, filepath.Join(d.dir, "kustomization.yaml"), "kustomize.config.k8s.io/v1beta1", "Kustomization", &d.kust)
	if len(d.kust.ConfigMapGenerator) != 1 || !d.kust.GeneratorOptions.DisableNameSuffixHash {
		t.Fatalf("kustomization.yaml: want one configMapGenerator, without a hash suffix (job.yaml, applied on its own, mounts it by name)")
	}
	d.cmName = d.kust.ConfigMapGenerator[0].Name
	for _, f := range d.kust.ConfigMapGenerator[0].Files {
		if _, err := os.Stat(filepath.Join(d.dir, f)); err != nil {
			t.Errorf("kustomization.yaml: configMapGenerator: %v", err)
		}
		d.config[filepath.Base(f)] = filepath.Join(d.dir, f)
	}
	want := []string{"kubernetes/cronjob.yaml", "kubernetes/pvc.yaml"}
	if got := slices.Sorted(slices.Values(d.kust.Resources)); !slices.Equal(got, want) {
		t.Errorf("kustomization.yaml: resources %v, want %v (job.yaml is created on its own)", got, want)
	}
	k := filepath.Join(d.dir, "kubernetes")
	decodeStrict(t, filepath.Join(k, "pvc.yaml"), "v1", "PersistentVolumeClaim", &d.pvc)
	decodeStrict(t, filepath.Join(k, "job.yaml"), "batch/v1", "Job", &d.job)
	decodeStrict(t, filepath.Join(k, "cronjob.yaml"), "batch/v1", "CronJob", &d.cronJob)
	yamls, _ := filepath.Glob(filepath.Join(k, "*.yaml"))
	if len(yamls) != 3 {
		t.Errorf("deploy/kubernetes holds %d YAML files; this test decodes 3: test the new one", len(yamls))
	}
	return d
}

// argValue returns the value of --name in args (--name=v or --name v).
func argValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// shardCount is the number of shards a sweep run's arguments ask for:
// --shards N, or --shard $(JOB_COMPLETION_INDEX)/N.
func shardCount(t *testing.T, args []string) int {
	t.Helper()
	if v, ok := argValue(args, "shards"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("--shards %q", v)
		}
		return n
	}
	if v, ok := argValue(args, "shard"); ok {
		i, n, _ := strings.Cut(v, "/")
		c, err := strconv.Atoi(n)
		if i != "$(JOB_COMPLETION_INDEX)" || err != nil {
			t.Fatalf("--shard %q: want $(JOB_COMPLETION_INDEX)/N", v)
		}
		return c
	}
	t.Fatalf("sweep %v: no --shards or --shard: each pod would run the whole sweep", args)
	return 0
}

func TestDeployIndexedJob(t *testing.T) {
	d := loadDeploy(t)
	spec := d.job.Spec
	c := onlyContainer(t, spec.Template.Spec.Containers, "sweep")
	n := shardCount(t, c.Args)
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("job.yaml: completionMode %v, want Indexed (JOB_COMPLETION_INDEX picks the shard)", deref(spec.CompletionMode))
	}
	if spec.Completions == nil || int(*spec.Completions) != n {
		t.Errorf("job.yaml: completions %v, want %d, the shards of the sweep's --shards/--shard", deref(spec.Completions), n)
	}
	if spec.Parallelism == nil || int(*spec.Parallelism) != n {
		t.Errorf("job.yaml: parallelism %v, want %d: one pod per shard at once", deref(spec.Parallelism), n)
	}
	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex < 1 {
		t.Errorf("job.yaml: backoffLimitPerIndex %v: want retries per index (a retried shard resumes)", deref(spec.BackoffLimitPerIndex))
	}
	if m := spec.MaxFailedIndexes; m == nil || *m < 0 || int(*m) >= n {
		t.Errorf("job.yaml: maxFailedIndexes %v: want 0 to %d", deref(m), n-1)
	}
	checkFailurePolicy(t, "job.yaml", spec.PodFailurePolicy, spec.Template.Spec, map[string]map[int32]bool{"sweep": {2: true}})
	checkPod(t, "job.yaml", d, spec.Template.Spec)
	if skipRuns(t) {
		return
	}
	runIndexedJob(t, d, n)
}

func TestDeployCronJob(t *testing.T) {
	d := loadDeploy(t)
	cj := d.cronJob.Spec
	if cj.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("cronjob.yaml: concurrencyPolicy %q, want Forbid: two nights at once would race for last-good", cj.ConcurrencyPolicy)
	}
	if len(strings.Fields(cj.Schedule)) != 5 {
		t.Errorf("cronjob.yaml: schedule %q: want 5 fields, minute hour day month weekday", cj.Schedule)
	}
	if cj.TimeZone == nil {
		t.Errorf("cronjob.yaml: no timeZone: the schedule would follow the controller's clock")
	} else if _, err := time.LoadLocation(*cj.TimeZone); err != nil {
		t.Errorf("cronjob.yaml: timeZone: %v", err)
	}
	spec := cj.JobTemplate.Spec
	pod := spec.Template.Spec
	sw := onlyContainer(t, pod.InitContainers, "sweep")
	gates := onlyContainer(t, pod.Containers, "gates")
	job := onlyContainer(t, d.job.Spec.Template.Spec.Containers, "sweep")
	if sw.Image != job.Image || gates.Image != job.Image {
		t.Errorf("cronjob.yaml: images %q, %q; job.yaml's %q: want the same image", sw.Image, gates.Image, job.Image)
	}
	// the same run as job.yaml's, unsharded, into the night's folder
	if got, want := withoutFlags(sw.Args, "out", "shards", "shard"), withoutFlags(job.Args, "out", "shards", "shard"); !slices.Equal(got, want) {
		t.Errorf("cronjob.yaml: sweep %q, want job.yaml's %q", got, want)
	}
	if out, _ := argValue(sw.Args, "out"); !strings.Contains(out, "$(NIGHT)") {
		t.Errorf("cronjob.yaml: --out %q: want a folder per night, $(NIGHT)", out)
	}
	if sw.Resources.String() != job.Resources.String() {
		t.Errorf("cronjob.yaml: the sweep's resources %v, job.yaml's %v", sw.Resources, job.Resources)
	}
	checkFailurePolicy(t, "cronjob.yaml", spec.PodFailurePolicy, pod, map[string]map[int32]bool{"sweep": {2: true}, "gates": {1: true, 2: true}})
	checkPod(t, "cronjob.yaml", d, pod)
	if skipRuns(t) {
		return
	}
	runNights(t, d)
}

// skipRuns reports, under -short, that the containers and scripts are not
// run: .ci/run's race step, where each sweep is a process built with the
// detector (45 s of wall time for the three tests, measured once on a
// shared machine) and runs nothing concurrently that
// the other tests do not; the plain step runs them.
func skipRuns(t *testing.T) bool {
	t.Helper()
	if testing.Short() {
		t.Log("-short: the files are checked, not run")
	}
	return testing.Short()
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func onlyContainer(t *testing.T, cs []corev1.Container, name string) corev1.Container {
	t.Helper()
	if len(cs) != 1 || cs[0].Name != name {
		t.Fatalf("containers %d: want one, %q", len(cs), name)
	}
	return cs[0]
}

// withoutFlags is args without the options named.
func withoutFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if strings.HasPrefix(args[i], "--") && slices.Contains(names, name) {
			if !hasValue {
				i++
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// checkFailurePolicy checks that bad input (exit 2) and the other codes in
// final end the job (a retry would fail the same way), that a disruption is
// not counted, and that no rule ends the job on an exit a retry can mend
// (1 of the sweep: a run failed, a lock held; 130: stopped by a signal).
func checkFailurePolicy(t *testing.T, file string, p *batchv1.PodFailurePolicy, pod corev1.PodSpec, final map[string]map[int32]bool) {
	t.Helper()
	if p == nil {
		t.Errorf("%s: no podFailurePolicy", file)
		return
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: restartPolicy %q: a podFailurePolicy needs Never", file, pod.RestartPolicy)
	}
	checkRuleSyntax(t, file, p, pod)
	disruption := false
	for _, r := range p.Rules {
		for _, c := range r.OnPodConditions {
			disruption = disruption || c.Type == corev1.DisruptionTarget && r.Action == batchv1.PodFailurePolicyActionIgnore
		}
	}
	if !disruption {
		t.Errorf("%s: no rule ignores a DisruptionTarget (eviction, preemption, a drained node)", file)
	}
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		for _, code := range []int32{1, 2, 130, 137} {
			action := failureAction(p, c.Name, code)
			ends := action == batchv1.PodFailurePolicyActionFailJob || action == batchv1.PodFailurePolicyActionFailIndex
			if ends != final[c.Name][code] {
				t.Errorf("%s: container %s, exit %d: action %q; want the job to end: %v", file, c.Name, code, action, final[c.Name][code])
			}
		}
	}
}

// checkRuleSyntax checks what the API server's validation asks of exit
// code rules: values sorted, distinct, no 0 under In, at most 255, and a
// containerName that names one of the pod's containers.
func checkRuleSyntax(t *testing.T, file string, p *batchv1.PodFailurePolicy, pod corev1.PodSpec) {
	t.Helper()
	names := map[string]bool{}
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		names[c.Name] = true
	}
	for i, r := range p.Rules {
		e := r.OnExitCodes
		if e == nil {
			continue
		}
		sorted := slices.IsSorted(e.Values) && len(slices.Compact(slices.Clone(e.Values))) == len(e.Values)
		if !sorted || len(e.Values) == 0 || len(e.Values) > 255 || e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && slices.Contains(e.Values, 0) {
			t.Errorf("%s: podFailurePolicy rule %d: values %v: want 1 to 255 distinct codes in order, no 0 under In", file, i, e.Values)
		}
		if e.ContainerName != nil && !names[*e.ContainerName] {
			t.Errorf("%s: podFailurePolicy rule %d: no container %q", file, i, *e.ContainerName)
		}
	}
}

// failureAction is what p does when container exits with code: the first
// rule that matches, as the Job controller reads them ("" : Count).
func failureAction(p *batchv1.PodFailurePolicy, container string, code int32) batchv1.PodFailurePolicyAction {
	for _, r := range p.Rules {
		e := r.OnExitCodes
		if e == nil || e.ContainerName != nil && *e.ContainerName != container {
			continue
		}
		in := slices.Contains(e.Values, code)
		if in == (e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) {
			return r.Action
		}
	}
	return ""
}

// checkPod checks what a pod of deploy/ must get right to start: its
// volumes are deploy/'s volume claim (ReadWriteMany) and ConfigMap, every
// mount names a volume, every $(VAR) a variable of its container, and a
// sweep run's --memory and --workers fit the container's resources.
func checkPod(t *testing.T, file string, d *deploy, pod corev1.PodSpec) {
	t.Helper()
	if !slices.Contains(d.pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("pvc.yaml: access modes %v: every shard writes at once, want ReadWriteMany", d.pvc.Spec.AccessModes)
	}
	vols := map[string]bool{}
	for _, v := range pod.Volumes {
		vols[v.Name] = true
		switch {
		case v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != d.pvc.Name:
			t.Errorf("%s: volume %s: claim %q, want pvc.yaml's %q", file, v.Name, v.PersistentVolumeClaim.ClaimName, d.pvc.Name)
		case v.ConfigMap != nil && v.ConfigMap.Name != d.cmName:
			t.Errorf("%s: volume %s: ConfigMap %q, want kustomization.yaml's %q", file, v.Name, v.ConfigMap.Name, d.cmName)
		case v.PersistentVolumeClaim == nil && v.ConfigMap == nil:
			t.Errorf("%s: volume %s: want the claim or the ConfigMap", file, v.Name)
		}
	}
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		for _, m := range c.VolumeMounts {
			if !vols[m.Name] {
				t.Errorf("%s: container %s mounts %q: no such volume", file, c.Name, m.Name)
			}
		}
		defined := map[string]bool{}
		for _, e := range c.Env {
			defined[e.Name] = true
		}
		for _, a := range append(slices.Clone(c.Command), c.Args...) {
			for _, m := range varRef.FindAllStringSubmatch(a, -1) {
				if !defined[m[1]] {
					t.Errorf("%s: container %s: %q: $(%s) is not among its env (Kubernetes leaves it as it is)", file, c.Name, a, m[1])
				}
			}
		}
		checkResources(t, file, c)
	}
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkResources: a sweep run's memory guard (--memory, plus what the
// program takes beside it) within the container's memory limit, else the
// kernel kills it before the guard can refuse a run; its workers within the
// CPUs it requested.
func checkResources(t *testing.T, file string, c corev1.Container) {
	t.Helper()
	if len(c.Args) == 0 || c.Args[0] != "run" {
		return
	}
	mem, ok := argValue(c.Args, "memory")
	limit, hasLimit := c.Resources.Limits[corev1.ResourceMemory]
	if !ok || !hasLimit {
		t.Errorf("%s: container %s: want --memory and a memory limit", file, c.Name)
		return
	}
	n, err := parseBytes(mem)
	if err != nil || n+baseBytes > limit.Value() {
		t.Errorf("%s: container %s: --memory %s (+%d MiB) over its memory limit %s", file, c.Name, mem, baseBytes>>20, limit.String())
	}
	w, _ := argValue(c.Args, "workers")
	workers, err := strconv.Atoi(w)
	cpu := c.Resources.Requests[corev1.ResourceCPU]
	if err != nil || workers < 1 || int64(workers) > cpu.Value() {
		t.Errorf("%s: container %s: --workers %q: want 1 to the %s CPUs it requests", file, c.Name, w, cpu.String())
	}
}

// cluster runs deploy/'s containers here: each volume is a folder under
// root (the claim's persists from pod to pod), the ConfigMap's files are in
// its folder, and sweep is this test binary, each call logged.
type cluster struct {
	t    *testing.T
	d    *deploy
	root string
	bin  string
}

func newCluster(t *testing.T, d *deploy) *cluster {
	c := &cluster{t: t, d: d, root: t.TempDir()}
	c.bin = fakeBin(t, c.root)
	return c
}

// fakeBin writes a folder for PATH whose sweep is this test binary, and
// logs each call in root/sweep.log: the Slurm array task it runs in, then
// its arguments.
func fakeBin(t *testing.T, root string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	script := fmt.Sprintf(`#!/bin/sh
printf '%%s|%%s\n' "${SLURM_ARRAY_TASK_ID-}-${SLURM_ARRAY_TASK_MIN-}/${SLURM_ARRAY_TASK_COUNT-}" "$*" >>%q
HERDSWEEP_BE_SWEEP=1 exec %q "$@"
`, filepath.Join(root, "sweep.log"), exe)
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "sweep"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// sweepCalls is what root/sweep.log holds: one line per call of sweep.
func sweepCalls(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "sweep.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// volume is the folder of a pod's volume, made (and for the ConfigMap,
// filled) on first use.
func (c *cluster) volume(pod corev1.PodSpec, name string) string {
	dir := filepath.Join(c.root, "volumes", name)
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	for _, v := range pod.Volumes {
		if v.Name != name || v.ConfigMap == nil {
			continue
		}
		for key, src := range c.d.config {
			b, err := os.ReadFile(src)
			if err != nil {
				c.t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, key), b, 0o644); err != nil {
				c.t.Fatal(err)
			}
		}
	}
	return dir
}

// hostPaths rewrites the container's paths (a mount path, alone, after
// "--flag=" or followed by /…) into the folders of their volumes.
func (c *cluster) hostPaths(pod corev1.PodSpec, ctr corev1.Container) func(string) string {
	type mount struct {
		re   *regexp.Regexp
		host string
	}
	var ms []mount
	for _, m := range ctr.VolumeMounts {
		re := regexp.MustCompile(`(^|=)` + regexp.QuoteMeta(m.MountPath) + `(/|$)`)
		ms = append(ms, mount{re, c.volume(pod, m.Name)})
	}
	return func(s string) string {
		for _, m := range ms {
			s = m.re.ReplaceAllString(s, "${1}"+strings.ReplaceAll(m.host, "$", "$$")+"${2}")
		}
		return s
	}
}

var labelRef = regexp.MustCompile(`^metadata\.labels\['([^']+)'\]$`)

// run runs a container of pod as the kubelet would: its env (a label of
// the pod's through the downward API), $(VAR) expanded, paths mapped to
// volumes; sweep, the image's entrypoint, when it has no command. It
// returns the exit code and what the container printed.
func (c *cluster) run(pod corev1.PodSpec, ctr corev1.Container, labels map[string]string, env ...string) (int, string) {
	c.t.Helper()
	host := c.hostPaths(pod, ctr)
	vars := map[string]string{}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		vars[k] = v
	}
	expand := func(s string) string {
		return varRef.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := vars[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	for _, e := range ctr.Env {
		v := expand(e.Value)
		if e.ValueFrom != nil {
			var m []string
			if e.ValueFrom.FieldRef != nil {
				m = labelRef.FindStringSubmatch(e.ValueFrom.FieldRef.FieldPath)
			}
			if m == nil || labels[m[1]] == "" {
				c.t.Fatalf("container %s: env %s: want a label of the pod's (this test knows %v)", ctr.Name, e.Name, labels)
			}
			v = labels[m[1]]
		}
		vars[e.Name] = v
		env = append(env, e.Name+"="+host(v))
	}
	argv := append(slices.Clone(ctr.Command), ctr.Args...)
	if len(ctr.Command) == 0 {
		argv = append([]string{"sweep"}, ctr.Args...)
	}
	for i := range argv {
		argv[i] = host(expand(argv[i]))
	}
	if argv[0] == "sweep" {
		argv[0] = filepath.Join(c.bin, "sweep")
		c.onVolumes(ctr.Name, argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.root
	cmd.Env = append(env, "PATH="+c.bin+":/usr/bin:/bin", "HOME="+c.root)
	out, err := cmd.CombinedOutput()
	return exitCodeOf(c.t, err), string(out)
}

// onVolumes checks that what sweep reads and writes is on a volume: the
// pods' root filesystem is read-only, and a relative --out would land in
// the container's working folder.
func (c *cluster) onVolumes(container string, argv []string) {
	c.t.Helper()
	for _, name := range []string{"out", "config", "results"} {
		if v, ok := argValue(argv, name); ok && !strings.HasPrefix(v, filepath.Join(c.root, "volumes")+"/") {
			c.t.Errorf("container %s: --%s %s: not on a volume", container, name, v)
		}
	}
}

func exitCodeOf(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// runIndexedJob runs job.yaml's n pods, one per index, one after the
// other, then checks that their dataset is whole and the same as one
// unsharded run of the same config.
func runIndexedJob(t *testing.T, d *deploy, n int) {
	c := newCluster(t, d)
	pod := d.job.Spec.Template.Spec
	labels := map[string]string{"batch.kubernetes.io/job-name": d.job.Name}
	for i := range n {
		if code, out := c.run(pod, pod.Containers[0], labels, "JOB_COMPLETION_INDEX="+strconv.Itoa(i)); code != 0 {
			t.Fatalf("job.yaml: index %d: exit %d\n%s", i, code, out)
		}
	}
	out, _ := argValue(pod.Containers[0].Args, "out")
	dataset := c.hostPaths(pod, pod.Containers[0])(out)
	whole := filepath.Join(c.root, "whole")
	config := filepath.Join(c.volume(pod, "config"), "sweeps.toml")
	sweepName, _ := argValue(pod.Containers[0].Args, "sweep")
	for _, args := range [][]string{
		{"run", "--config", config, "--sweep", sweepName, "--out", whole, "--yes", "--no-report", "--quiet"},
		{"check", dataset},
		{"diff", whole, dataset},
	} {
		if _, stderr, code := sweep(t, args...); code != 0 {
			t.Fatalf("the shards of job.yaml, then sweep %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
	}
}

// runNights runs cronjob.yaml's pod three nights in a row (its init
// container, then the gates): the first has nothing to compare with, the
// second is compared with the first, and the third, with an assertion
// added that fails, fails its gates and leaves last-good alone.
func runNights(t *testing.T, d *deploy) {
	c := newCluster(t, d)
	pod := d.cronJob.Spec.JobTemplate.Spec.Template.Spec
	lastGood := filepath.Join(c.volume(pod, "data"), "last-good")
	nights := []string{"herdsweep-nightly-29410560", "herdsweep-nightly-29412000", "herdsweep-nightly-29413440"}
	for i, night := range nights {
		labels := map[string]string{"batch.kubernetes.io/job-name": night}
		if code, out := c.run(pod, pod.InitContainers[0], labels); code != 0 {
			t.Fatalf("cronjob.yaml: night %d: sweep: exit %d\n%s", i+1, code, out)
		}
		if i == 2 {
			f := filepath.Join(c.volume(pod, "config"), "nightly.assert")
			appendFile(t, f, "gave_up max < 0\n")
		}
		code, out := c.run(pod, pod.Containers[0], labels)
		want, wantGood := 0, night
		if i == 2 {
			want, wantGood = 1, nights[1]
		}
		if code != want {
			t.Fatalf("cronjob.yaml: night %d: gates: exit %d, want %d\n%s", i+1, code, want, out)
		}
		if b, err := os.ReadFile(lastGood); err != nil || string(b) != wantGood+"\n" {
			t.Fatalf("cronjob.yaml: night %d: last-good %q (%v), want %s\n%s", i+1, b, err, wantGood, out)
		}
	}
	compares := 0
	for _, l := range sweepCalls(t, c.root) {
		if strings.Contains(l, "|compare ") {
			compares++
			if !strings.HasSuffix(l, "/nights/"+nights[0]+" "+c.volume(pod, "data")+"/nights/"+nights[1]) && compares == 1 {
				t.Errorf("cronjob.yaml: the second night's gate ran %q: want night 1 compared with night 2", l)
			}
		}
	}
	if compares != 2 {
		t.Errorf("cronjob.yaml: sweep compare ran %d times over 3 nights, want 2 (the first has none to compare with)", compares)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(s)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// fakeSbatch is an sbatch that runs each job at once, as Slurm would run
// it: a copy of the script (not beside the original), the environment of
// the submission, and for an array the task's SLURM_ARRAY_* variables. It
// logs "ID ARGS" in DIR/sbatch.log and each job's outcome in DIR/states; a
// job whose afterok dependency failed never runs. Options it does not
// know are refused.
const fakeSbatch = `#!/bin/sh
dir=%q
id=$(cat "$dir/next-id" 2>/dev/null || echo 1000)
echo $((id + 1)) >"$dir/next-id"
printf '%%s %%s\n' "$id" "$*" >>"$dir/sbatch.log"
array= dep= parsable=
while [ $# -gt 0 ]; do
	case $1 in
	--array=*) array=${1#--array=} ;;
	--dependency=*) dep=${1#--dependency=} ;;
	--parsable) parsable=1 ;;
	--export=ALL | --job-name=* | --output=* | --kill-on-invalid-dep=yes | --cpus-per-task=* | --mem=* | --time=*) ;;
	-*) echo "fake sbatch: $1: not an option this fake knows" >&2; exit 1 ;;
	*) break ;;
	esac
	shift
done
spool=$dir/spool/$id
mkdir -p "$spool" && cp "$1" "$spool/script" && chmod +x "$spool/script" || exit 1
shift
state=ok
case $dep in
"") ;;
afterok:*) for d in $(echo "${dep#afterok:}" | tr : ' '); do grep -qx "$d ok" "$dir/states" || state=never; done ;;
*) echo "fake sbatch: --dependency=$dep: this fake knows afterok:ID only" >&2; exit 1 ;;
esac
if [ $state = ok ] && [ -n "$array" ]; then
	lo=${array%%-*} hi=${array#*-}
	case "$lo$hi" in *[!0-9]* | "") echo "fake sbatch: --array=$array: this fake knows A-B only" >&2; exit 1 ;; esac
	i=$lo
	while [ "$i" -le "$hi" ]; do
		SLURM_JOB_ID=$id$i SLURM_ARRAY_JOB_ID=$id SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=$lo SLURM_ARRAY_TASK_MAX=$hi \
			SLURM_ARRAY_TASK_COUNT=$((hi - lo + 1)) "$spool/script" "$@" >"$spool/$i.out" 2>&1 || state=failed
		i=$((i + 1))
	done
elif [ $state = ok ]; then
	SLURM_JOB_ID=$id "$spool/script" "$@" >"$spool/out" 2>&1 || state=failed
fi
echo "$id $state" >>"$dir/states"
if [ -n "$parsable" ]; then echo "$id"; else echo "Submitted batch job $id"; fi
`

// slurmNight runs deploy/slurm/nightly.sh under the fake sbatch and
// returns the sbatch calls it made ("ID ARGS").
func slurmNight(t *testing.T, root, data, night string, shards int) []string {
	t.Helper()
	script := filepath.Join(repoRoot(t), "deploy", "slurm", "nightly.sh")
	cmd := exec.Command(script)
	cmd.Env = []string{"PATH=" + filepath.Join(root, "bin") + ":/usr/bin:/bin", "HOME=" + root,
		"HERDSWEEP_DATA=" + data, "NIGHT=" + night, "SHARDS=" + strconv.Itoa(shards)}
	out, err := cmd.CombinedOutput()
	if err != nil {
		spool, _ := exec.Command("sh", "-c", `tail -n 20 "$0"/spool/*/*out`, root).CombinedOutput()
		t.Fatalf("slurm/nightly.sh, night %s: %v\n%s\nthe jobs' output:\n%s", night, err, out, spool)
	}
	b, err := os.ReadFile(filepath.Join(root, "sbatch.log"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for l := range strings.Lines(string(b)) {
		if strings.Contains(l, night) {
			calls = append(calls, strings.TrimSuffix(l, "\n"))
		}
	}
	return calls
}

func TestDeploySlurm(t *testing.T) {
	root := t.TempDir()
	bin := fakeBin(t, root)
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), fmt.Appendf(nil, fakeSbatch, root), 0o755); err != nil {
		t.Fatal(err)
	}
	slurmDir := filepath.Join(repoRoot(t), "deploy", "slurm")
	for _, f := range []string{"nightly.sh", "shard.sbatch"} {
		b, err := os.ReadFile(filepath.Join(slurmDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`(?m)^#SBATCH\s+(--array|-a|--dependency|-d)\b`).Match(b) {
			t.Errorf("slurm/%s: give --array and --dependency on sbatch's command line, where nightly.sh sets them (and this test sees them)", f)
		}
	}
	if skipRuns(t) {
		return
	}
	data := filepath.Join(root, "data")
	const shards = 3
	nights := []string{"20261201T0200Z", "20261202T0200Z"}
	for _, night := range nights {
		checkSbatchCalls(t, slurmNight(t, root, data, night, shards), shards)
		checkShardsRan(t, sweepCalls(t, root), night, shards)
		if b, err := os.ReadFile(filepath.Join(data, "last-good")); err != nil || string(b) != night+"\n" {
			t.Errorf("night %s: last-good %q (%v): want the night, whose gates passed", night, b, err)
		}
	}
	whole := filepath.Join(root, "whole")
	config := filepath.Join(repoRoot(t), "deploy", "nightly", "sweeps.toml")
	for _, args := range [][]string{
		{"run", "--config", config, "--sweep", "nightly", "--out", whole, "--yes", "--no-report", "--quiet"},
		{"diff", whole, filepath.Join(data, "nights", nights[0])},
	} {
		if _, stderr, code := sweep(t, args...); code != 0 {
			t.Fatalf("the shards of slurm/shard.sbatch, then sweep %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	var compares []string
	for _, l := range sweepCalls(t, root) {
		if _, args, _ := strings.Cut(l, "|"); strings.HasPrefix(args, "compare ") {
			compares = append(compares, args)
		}
	}
	want := fmt.Sprintf("compare --threshold 5%% %s/nights/%s %s/nights/%s", data, nights[0], data, nights[1])
	if !slices.Equal(compares, []string{want}) {
		t.Errorf("the gates compared %q, want %q", compares, want)
	}
}

// checkSbatchCalls checks nightly.sh's two submissions: the shards as an
// array of tasks 0 to shards-1, then the gates once they all succeeded.
func checkSbatchCalls(t *testing.T, calls []string, shards int) {
	t.Helper()
	if len(calls) != 2 {
		t.Fatalf("sbatch ran %d times: %q; want the shards, then the gates", len(calls), calls)
	}
	arrayID, args, _ := strings.Cut(calls[0], " ")
	if array, _ := argValue(strings.Fields(args), "array"); array != fmt.Sprintf("0-%d", shards-1) || !strings.HasSuffix(args, "/shard.sbatch") {
		t.Errorf("sbatch %s: want --array=0-%d of shard.sbatch (SHARDS=%d)", args, shards-1, shards)
	}
	_, args, _ = strings.Cut(calls[1], " ")
	if dep, _ := argValue(strings.Fields(args), "dependency"); dep != "afterok:"+arrayID || !strings.HasSuffix(args, "/nightly/gates.sh") {
		t.Errorf("sbatch %s: want --dependency=afterok:%s (the array) of nightly/gates.sh", args, arrayID)
	}
}

// checkShardsRan checks, from the calls of sweep, that the night's sweep
// runs ran shards 0 to shards-1 of shards, each once.
func checkShardsRan(t *testing.T, calls []string, night string, shards int) {
	t.Helper()
	var got []string
	for _, l := range calls {
		task, args, _ := strings.Cut(l, "|")
		if !strings.HasPrefix(args, "run ") || !strings.Contains(args, "/nights/"+night+" ") {
			continue
		}
		shard, ok := argValue(strings.Fields(args), "shard")
		if !ok { // sweep reads SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT
			var id, lo, count int
			if _, err := fmt.Sscanf(task, "%d-%d/%d", &id, &lo, &count); err != nil {
				t.Fatalf("sweep %s: in no array task (%q)", args, task)
			}
			shard = fmt.Sprintf("%d/%d", id-lo, count)
		}
		got = append(got, shard)
	}
	var want []string
	for i := range shards {
		want = append(want, fmt.Sprintf("%d/%d", i, shards))
	}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("night %s: sweep run ran shards %v, want %v", night, got, want)
	}
}

// TestDeployDockerfile checks what deploy/Dockerfile must agree on with
// the rest (no image is built here): the Go of go.mod, the README's build
// of ./cmd/sweep, the binary where the manifests and gates.sh call it
// (sweep, on the PATH, the entrypoint), and the user the pods run as.
func TestDeployDockerfile(t *testing.T) {
	d := loadDeploy(t)
	b, err := os.ReadFile(filepath.Join(d.dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	mod, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	if goVersion == nil || !strings.Contains(src, "FROM golang:"+string(goVersion[1])+"-") {
		t.Errorf("Dockerfile: want FROM golang:%s-…, the Go of go.mod", goVersion[1])
	}
	build := regexp.MustCompile(`(?m)^RUN CGO_ENABLED=0 go build (?:-\S+ )*-o (\S+) (\./cmd/sweep)$`).FindStringSubmatch(src)
	readme, _ := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if build == nil || !strings.Contains(string(readme), "go build -o sweep "+build[2]) {
		t.Fatalf("Dockerfile: want a static build of the README's package, RUN CGO_ENABLED=0 go build … -o PATH ./cmd/sweep")
	}
	if !strings.Contains(src, "\nCOPY --from=build "+build[1]+" /usr/local/bin/sweep\n") {
		t.Errorf("Dockerfile: want COPY --from=build %s /usr/local/bin/sweep: gates.sh calls sweep on the PATH", build[1])
	}
	if !strings.HasSuffix(src, "\nENTRYPOINT [\"sweep\"]\n") {
		t.Errorf("Dockerfile: want it to end with ENTRYPOINT [\"sweep\"]: the manifests give sweep's arguments only")
	}
	for file, pod := range map[string]corev1.PodSpec{"job.yaml": d.job.Spec.Template.Spec, "cronjob.yaml": d.cronJob.Spec.JobTemplate.Spec.Template.Spec} {
		sc := pod.SecurityContext
		if sc == nil || sc.RunAsUser == nil || sc.RunAsGroup == nil ||
			!strings.Contains(src, fmt.Sprintf("\nUSER %d:%d\n", *sc.RunAsUser, *sc.RunAsGroup)) {
			t.Errorf("%s: runAsUser and runAsGroup: want the Dockerfile's USER", file)
		}
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			if c.Name == "sweep" && len(c.Command) > 0 {
				t.Errorf("%s: container sweep: command %q: want the image's entrypoint", file, c.Command)
			}
		}
	}
}
