package live

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	backoff4 "github.com/cenkalti/backoff/v4"
	backoff5 "github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/hashicorp/go-retryablehttp"
	grpcbackoff "google.golang.org/grpc/backoff"

	"github.com/herdsweep/herdsweep/sim"
)

// A Driver is one client's retry loop: a real library with its shipped
// defaults, or one of sim's policies in a plain loop. Do returns nil once
// the client is served, an error when it gives up.
type Driver struct {
	Name   string     // as `sweep live --library` takes it
	Preset string     // the sim preset that models it, if any
	Model  sim.Policy // the sim policy that models it when no preset does
	Module string     // the module whose code runs: path@version (module)
	Source string     // the file read for it (in the module cache)
	Note   string     // what differs from the preset, or how it is driven
	Do     func(ctx context.Context, e Env) error
	// GRPC, when set, makes the server speak gRPC (health Check) instead of
	// HTTP; the server then records each attempt.
	GRPC *GRPCClient
	// Scalable drivers take their clock and timers from Env (Env.Now,
	// Env.Sleep), so that a run may go faster than real time.
	Scalable bool
	// stepped: a sim:NAME fleet, its preset run by sim itself
	// (simdriver.go); Do is nil. The harness then places every request.
	stepped bool
}

// Drivers returns every driver, in a stable order: the libraries first, then
// each preset of sim in a plain loop ("sim:NAME").
func Drivers() []Driver {
	ds := []Driver{
		{Name: "cenkalti-backoff", Preset: "cenkalti-backoff", Module: module("github.com/cenkalti/backoff/v5"),
			Source: "retry.go (Retry, DefaultMaxElapsedTime 15 min), exponential.go (NewExponentialBackOff)",
			Note:   "backoff.Retry(ctx, op) with every default; an HTTP rejection is an error",
			Do:     cenkaltiV5},
		{Name: "cenkalti-backoff-v4", Preset: "cenkalti-backoff", Module: module("github.com/cenkalti/backoff/v4"),
			Source: "retry.go (Retry), exponential.go (NewExponentialBackOff, MaxElapsedTime 15 min)",
			Note:   "backoff.RetryNotifyWithTimer(op, backoff.WithContext(b, ctx), nil, timer) with b := backoff.NewExponentialBackOff() and every default; its own Clock and Timer hooks carry the run's clock, so it may run scaled",
			Do:     cenkaltiV4, Scalable: true},
		{Name: "go-retryablehttp", Preset: "go-retryablehttp", Module: module("github.com/hashicorp/go-retryablehttp"),
			Source: "client.go (NewClient, DefaultRetryPolicy, DefaultBackoff, parseRetryAfterHeader)",
			Note:   "retryablehttp.NewClient() with its defaults (RetryMax 4, 1 s to 30 s, Retry-After on 429 and 503), logger off, its HTTPClient the client's own",
			Do:     retryableHTTP},
		{Name: "aws-sdk-go-v2", Preset: "aws-sdk-go-v2", Module: module("github.com/aws/aws-sdk-go-v2"),
			Source: "aws/retry/standard.go (NewStandard), jitter_backoff.go (backoffDelay2026), middleware.go (handleAttempt: the loop reproduced here)",
			Note:   "retry.NewStandard() per client, driven as its middleware does; since retry behaviour 2.1 a non-throttle error (503, refused) backs off from 50 ms and a 429 from 1 s, capped before the jitter, and a retry costs 14 tokens (5 for a 429), as the preset (aws-sdk-go-v2-2026) models",
			Do:     awsDriver(false)},
		{Name: "aws-sdk-go-v2-legacy", Preset: "aws-sdk-go-v2-standard-2020", Module: module("github.com/aws/aws-sdk-go-v2"),
			Source: "aws/retry/jitter_backoff.go (NewExponentialJitterBackoff: backoffDelayLegacy), standard.go (DefaultRetryCost 5)",
			Note:   "retry.NewStandard with the exported legacy backoff (U·2^attempt s, exactly 20 s past int(log2 20)) and retry cost 5: the standard retryer before retry behaviour 2.1, which the preset models",
			Do:     awsDriver(true)},
		{Name: "grpc-go", Preset: "grpc", Module: module("google.golang.org/grpc"),
			Source: "backoff/backoff.go (DefaultConfig), internal/backoff/backoff.go (Exponential.Backoff)",
			Note:   "internal/backoff cannot be imported: its Backoff(retries) is reproduced line by line on the exported backoff.DefaultConfig; connection backoff retries forever, retries counted from 0 at the first failure",
			Do:     grpcGo},
		{Name: "grpc-go-retry", Model: sim.Policy{Kind: sim.GRPC, Base: time.Second, Multiplier: 2, Cap: 30 * time.Second, Width: 0.2, MaxAttempts: 5},
			Module: module("google.golang.org/grpc"),
			Source: "stream.go (csAttempt.shouldRetry: min(initialBackoff·multiplier^n, maxBackoff)·(0.8 + 0.4U)), service_config.go",
			Note:   "a real gRPC channel per client calling grpc.health.v1.Health/Check with a service-config retry policy (maxAttempts 5, 1 s × 2 to 30 s, UNAVAILABLE and RESOURCE_EXHAUSTED, no throttling): grpc-go jitters ±20 % from the first retry, not U(0, backoff) as gRFC A6 words it; modelled by the grpc family",
			Do:     grpcCall(GRPCClient{ServiceConfig: grpcRetryConfig}), GRPC: &GRPCClient{ServiceConfig: grpcRetryConfig}},
		{Name: "failsafe-go", Preset: "failsafe-go", Module: module("github.com/failsafe-go/failsafe-go"),
			Source: "retrypolicy/retry.go (NewWithDefaults: defaultMaxRetries 2, no delay), retrypolicy/retryexecutor.go (getDelay)",
			Note:   "retrypolicy.NewWithDefaults(): 3 attempts with no delay at all; the preset's fixed 1 ms reaches the next tick as 0 does",
			Do:     failsafeDriver(retrypolicy.NewWithDefaults[struct{}]())},
		{Name: "failsafe-go-backoff", Model: sim.Policy{Kind: sim.HTTPRetry, Base: time.Second, Multiplier: 2, Cap: 30 * time.Second, MaxAttempts: 5}, Module: module("github.com/failsafe-go/failsafe-go"),
			Source: "retrypolicy/retry.go (WithBackoff: factor 2), retrypolicy/retryexecutor.go (getFixedOrRandomDelay)",
			Note:   "retrypolicy.NewBuilder().WithBackoff(1 s, 30 s).WithMaxRetries(4): go-retryablehttp's curve without its Retry-After, as the http-retry family",
			Do:     failsafeDriver(retrypolicy.NewBuilder[struct{}]().WithBackoff(time.Second, 30*time.Second).WithMaxRetries(4).Build())},
	}
	for _, p := range sim.Presets() {
		ds = append(ds, simDriver(p))
	}
	return ds
}

// module is path@version of a module this program is built with, the
// version go.mod requires (runtime/debug.ReadBuildInfo); path alone where
// the build says no versions (a test binary).
func module(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					d = d.Replace
				}
				return path + "@" + d.Version
			}
		}
	}
	return path
}

// Policy is the sim policy that models the driver: its preset's, or Model.
func (d Driver) Policy() (sim.Policy, error) {
	if d.Preset == "" {
		return d.Model, d.Model.Validate()
	}
	pr, ok := sim.PresetByName(d.Preset)
	if !ok {
		return sim.Policy{}, fmt.Errorf("live: driver %s: no preset %q", d.Name, d.Preset)
	}
	return pr.Policy, nil
}

// ModelName names the model: the preset, family:KIND for a family's
// defaults, else its spec.
func (d Driver) ModelName() string {
	if d.Preset != "" {
		return d.Preset
	}
	return modelName(d.Model)
}

// DriverByName returns the driver called name.
func DriverByName(name string) (Driver, error) {
	var names []string
	for _, d := range Drivers() {
		if d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	return Driver{}, fmt.Errorf("%q: want one of %s", name, strings.Join(names, ", "))
}

// failsafeDriver runs p; a policy is safe for concurrent use (each
// execution keeps its own state).
func failsafeDriver(p retrypolicy.RetryPolicy[struct{}]) func(ctx context.Context, e Env) error {
	return func(ctx context.Context, e Env) error {
		_, err := failsafe.With(p).WithContext(ctx).Get(func() (struct{}, error) { return struct{}{}, getOnce(ctx, e) })
		return err
	}
}

func cenkaltiV5(ctx context.Context, e Env) error {
	_, err := backoff5.Retry(ctx, func() (struct{}, error) { return struct{}{}, getOnce(ctx, e) })
	return err
}

// cenkaltiV4 hands the library the run's clock through its own hooks:
// ExponentialBackOff.Clock (for MaxElapsedTime) and the Timer of
// RetryNotifyWithTimer. At scale 1 they are the system clock.
func cenkaltiV4(ctx context.Context, e Env) error {
	b := backoff4.NewExponentialBackOff(backoff4.WithClockProvider(envClock{e}))
	return backoff4.RetryNotifyWithTimer(func() error { return getOnce(ctx, e) }, backoff4.WithContext(b, ctx), nil, &envTimer{e: e})
}

type envClock struct{ e Env }

func (c envClock) Now() time.Time { return c.e.Now() }

// envTimer is cenkalti v4's Timer on the run's clock.
type envTimer struct {
	e Env
	t *time.Timer
}

func (t *envTimer) Start(d time.Duration) {
	real := time.Duration(float64(d) / t.e.Scale)
	if t.t == nil {
		t.t = time.NewTimer(real)
	} else {
		t.t.Reset(real)
	}
}

func (t *envTimer) Stop() {
	if t.t != nil {
		t.t.Stop()
	}
}

func (t *envTimer) C() <-chan time.Time { return t.t.C }

func retryableHTTP(ctx context.Context, e Env) error {
	c := retryablehttp.NewClient()
	c.HTTPClient = e.HTTP
	c.Logger = nil
	req, err := e.Request(ctx)
	if err != nil {
		return err
	}
	rreq, err := retryablehttp.FromRequest(req)
	if err != nil {
		return err
	}
	resp, err := c.Do(rreq)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &statusError{code: resp.StatusCode}
	}
	return nil
}

// awsDriver runs the standard retryer's loop as aws/retry/middleware.go's
// handleAttempt does: attempt token, send, release, retryable?, max
// attempts?, retry token, delay, sleep.
func awsDriver(legacy bool) func(ctx context.Context, e Env) error {
	return func(ctx context.Context, e Env) error {
		r := retry.NewStandard(func(o *retry.StandardOptions) {
			if legacy {
				o.Backoff = retry.NewExponentialJitterBackoff(o.MaxBackoff)
				o.RetryCost = retry.DefaultRetryCost //lint:ignore SA1019 the legacy retryer is the point of this driver
			}
		})
		releaseRetry := func(error) error { return nil }
		for attempt := 1; ; attempt++ {
			releaseAttempt := func(error) error { return nil }
			if attempt == 1 {
				releaseAttempt = r.GetInitialToken() //lint:ignore SA1019 the attempt token as the SDK's middleware.go takes it
			}
			err := getOnce(ctx, e)
			releaseRetry(err)
			releaseAttempt(err)
			if err == nil {
				return nil
			}
			if !r.IsErrorRetryable(err) {
				return err
			}
			if attempt >= r.MaxAttempts() {
				return fmt.Errorf("max attempts %d: %w", attempt, err)
			}
			var terr error
			if releaseRetry, terr = r.GetRetryToken(ctx, err); terr != nil {
				return errors.Join(err, terr)
			}
			d, derr := r.RetryDelay(attempt, err)
			if derr != nil {
				return derr
			}
			d = awsRetryAfter(d, err)
			if err := sleep(ctx, d); err != nil {
				return err
			}
		}
	}
}

// awsRetryAfter is aws-sdk-go-v2 v1.48.0 aws/retry/middleware.go
// adjustForRetryAfterHeader, line by line (it is unexported): a valid
// X-Amz-Retry-After (milliseconds, ≥ 0) replaces the backoff, clamped to
// [backoff, backoff + 5 s].
func awsRetryAfter(backoff time.Duration, err error) time.Duration {
	var se *statusError
	if !errors.As(err, &se) || se.amzRetryAfter == "" {
		return backoff
	}
	ms, perr := strconv.ParseInt(se.amzRetryAfter, 10, 64)
	if perr != nil || ms < 0 {
		return backoff
	}
	retryAfter := time.Duration(ms) * time.Millisecond
	return min(max(retryAfter, backoff), 5*time.Second+backoff)
}

// grpcBackoff is grpc-go internal/backoff Exponential.Backoff, line by line.
func grpcBackoff(cfg grpcbackoff.Config, retries int) time.Duration {
	if retries == 0 {
		return cfg.BaseDelay
	}
	backoff, max := float64(cfg.BaseDelay), float64(cfg.MaxDelay)
	for backoff < max && retries > 0 {
		backoff *= cfg.Multiplier
		retries--
	}
	if backoff > max {
		backoff = max
	}
	backoff *= 1 + cfg.Jitter*(rand.Float64()*2-1)
	if backoff < 0 {
		return 0
	}
	return time.Duration(backoff)
}

// grpcGo retries as a grpc-go ClientConn reconnects: Backoff(0) after the
// first failure, Backoff(1) after the second, … (addrConn.backoffIdx).
func grpcGo(ctx context.Context, e Env) error {
	for retries := 0; ; retries++ {
		err := getOnce(ctx, e)
		if err == nil {
			return nil
		}
		if errors.Is(err, errTooMany) || ctx.Err() != nil {
			return err
		}
		if err := sleep(ctx, grpcBackoff(grpcbackoff.DefaultConfig, retries)); err != nil {
			return err
		}
	}
}

// simDriver runs preset pr as the simulator does: sim.Driven, stepped at
// each close of the server's ticks (simdriver.go).
func simDriver(pr sim.Preset) Driver {
	return Driver{Name: "sim:" + pr.Name, Preset: pr.Name, Module: "github.com/herdsweep/herdsweep/sim",
		Source: "sim/presets.go, sim/driven.go (sim.Driven: the simulator's own run, stepped around the live server)",
		Note: "the simulator runs the preset (" + pr.Policy.Describe() + "): its delays, retry_on, limits and client components, with sim's random stream of the seed, " +
			"each request sent in the tick sim gives it; checks the live harness itself: where the machine keeps time it replays sim's run of the seed; " +
			"reads the scenario's Retry-After in scenario time, so it may run scaled",
		Scalable: true, stepped: true}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
