package paste

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/herdsweep/herdsweep/sim"
)

const grpcLibrary = "grpc-go (call retries)"

// printedGRPC is the service config and the call-attempt limit a setting
// prints: grpc.WithDefaultServiceConfig(`…`) and, when there,
// grpc.WithMaxCallAttempts(n) (0 when not).
func printedGRPC(how string) (cfg string, attempts int, err error) {
	const open = "grpc.WithDefaultServiceConfig(`"
	i := strings.Index(how, open)
	if i < 0 {
		return "", 0, errors.New("no grpc.WithDefaultServiceConfig(`…`) in the text")
	}
	rest := how[i+len(open):]
	j := strings.Index(rest, "`)")
	if j < 0 {
		return "", 0, errors.New("the service config is not closed")
	}
	cfg, rest = rest[:j], rest[j:]
	const more = "grpc.WithMaxCallAttempts("
	if k := strings.Index(rest, more); k >= 0 {
		end := strings.Index(rest[k:], ")")
		if attempts, err = strconv.Atoi(rest[k+len(more) : k+end]); err != nil {
			return "", 0, err
		}
	}
	return cfg, attempts, nil
}

// health answers Check with UNAVAILABLE while fail is set, else SERVING,
// and records when each attempt arrived.
type health struct {
	healthpb.UnimplementedHealthServer
	mu     sync.Mutex
	fail   bool        // answer UNAVAILABLE (else SERVING)
	arrive []time.Time // every attempt, in order
}

func (h *health) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.arrive = append(h.arrive, time.Now())
	if h.fail {
		return nil, status.Error(codes.Unavailable, "down")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (h *health) set(fail bool) {
	h.mu.Lock()
	h.fail = fail
	h.mu.Unlock()
}

func (h *health) attempts() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.arrive...)
}

// withChannel serves h on an in-memory listener and runs f with a channel
// made with the printed options, inside a synctest bubble: the retries'
// backoff passes in virtual time. f reports with t.Errorf and returns: the
// channel and the server must close before the bubble ends.
func withChannel(t *testing.T, cfg string, attempts int, f func(cc *grpc.ClientConn, h *health)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		lis := bufconn.Listen(1 << 16)
		srv := grpc.NewServer()
		h := &health{}
		healthpb.RegisterHealthServer(srv, h)
		go func() { _ = srv.Serve(lis) }()
		opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithDefaultServiceConfig(cfg)}
		if attempts > 0 {
			opts = append(opts, grpc.WithMaxCallAttempts(attempts))
		}
		cc, err := grpc.NewClient("passthrough:///bufnet", opts...)
		if err != nil {
			t.Fatalf("the printed service config does not parse: %v\n%s", err, cfg)
		}
		f(cc, h)
		cc.Close()
		srv.Stop()
		synctest.Wait()
	})
}

// call makes one Check and returns the attempts it took.
func call(t *testing.T, cc *grpc.ClientConn, h *health) []time.Time {
	t.Helper()
	before := len(h.attempts())
	_, _ = healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
	return h.attempts()[before:]
}

// throttler is grpc-go's retry throttling (clientconn.go retryThrottler):
// a retryable failure takes a token, not below 0, and refuses the retry
// when the tokens are then ≤ maxTokens/2 (throttle); a success adds the
// ratio, up to maxTokens (successfulRPC). shouldRetry (stream.go) takes
// the token before it checks maxAttempts.
type throttler struct{ tokens, max, ratio float64 }

func (th *throttler) throttle() bool {
	th.tokens = math.Max(th.tokens-1, 0)
	return th.tokens <= th.max/2
}

func (th *throttler) success() { th.tokens = math.Min(th.tokens+th.ratio, th.max) }

// failing is how many attempts a call to an always failing server makes:
// it stops at maxAttempts or when the throttler refuses.
func (th *throttler) failing(maxAttempts int) int {
	for n := 1; ; n++ {
		if th != nil && th.throttle() || n >= maxAttempts {
			return n
		}
	}
}

// The grpc-go service config each setting prints parses with the real
// module (grpc.NewClient with grpc.WithDefaultServiceConfig) and carries
// the policy's numbers: the method config grpc-go keeps holds its
// maxAttempts, initial and max backoff and multiplier; against a real
// server that fails, the waits between attempts are grpc-go's
// min(initial·multiplier^(n−1), max)·U(0.8, 1.2) (stream.go shouldRetry);
// and with retryThrottling, how many attempts each call makes — failing
// until the tokens run low, then after successes — is what grpc-go's
// throttler formula gives for maxTokens and tokenRatio.
func TestGRPCServiceConfigPastes(t *testing.T) {
	t.Parallel()
	n := 0
	for _, p := range grpcPolicies() {
		var st *sim.Setting
		settings := p.Settings()
		for i := range settings {
			if settings[i].Library == grpcLibrary {
				st = &settings[i]
			}
		}
		if st == nil {
			t.Errorf("%s: no %s setting", p.Short(), grpcLibrary)
			continue
		}
		if strings.HasPrefix(st.How, "not expressible") {
			continue
		}
		cfg, attempts, err := printedGRPC(st.How)
		if err != nil {
			t.Errorf("%s: %v in %q", p.Short(), err, st.How)
			continue
		}
		n++
		want := p // what the service config says: the policy, or its closest built-in
		if st.Closest != nil {
			want = st.Closest.Policy
		}
		t.Run(p.Short(), func(t *testing.T) { checkGRPC(t, want, cfg, attempts) })
	}
	if n < 10 {
		t.Errorf("%d settings print a service config; the policies should give at least 10", n)
	}
}

func checkGRPC(t *testing.T, p sim.Policy, cfg string, attempts int) {
	maxAttempts := p.AttemptLimit()
	if maxAttempts == 0 {
		maxAttempts = 1000 // the settings' stand-in for no limit
		if p.RetryTokens == 0 {
			t.Fatalf("%s: a failing call would make 1000 attempts", p.Short())
		}
	}
	var th *throttler
	if p.RetryTokens > 0 {
		th = &throttler{p.RetryTokens, p.RetryTokens, p.RetryTokenRatio}
	}
	withChannel(t, cfg, attempts, func(cc *grpc.ClientConn, h *health) {
		// A call that succeeds at once applies the service config.
		if got := call(t, cc, h); len(got) != 1 {
			t.Errorf("a call to a serving server made %d attempts", len(got))
			return
		}
		if th != nil {
			th.success()
		}
		rp := cc.GetMethodConfig("/grpc.health.v1.Health/Check").RetryPolicy
		if rp == nil {
			t.Errorf("no retry policy in %s", cfg)
			return
		}
		if got := fmt.Sprint(rp.MaxAttempts, rp.InitialBackoff, rp.MaxBackoff, rp.BackoffMultiplier); got != fmt.Sprint(maxAttempts, p.Base, p.Cap, p.Multiplier) {
			t.Errorf("grpc-go holds maxAttempts, initial, max backoff, multiplier %s; the policy has %d %v %v %g", got, maxAttempts, p.Base, p.Cap, p.Multiplier)
		}
		h.set(true)
		got := call(t, cc, h)
		if want := th.failing(maxAttempts); len(got) != want {
			t.Errorf("a failing call made %d attempts, want %d", len(got), want)
		}
		for i := 1; i < len(got); i++ {
			d := min(float64(p.Base)*math.Pow(p.Multiplier, float64(i-1)), float64(p.Cap))
			if gap := got[i].Sub(got[i-1]); float64(gap) < 0.8*d || float64(gap) > 1.2*d {
				t.Errorf("retry %d waited %v, want within [0.8, 1.2] × %v", i, gap, time.Duration(d))
			}
		}
		if th == nil {
			return
		}
		// Failing calls that drain the tokens, then successes that bring
		// them just past the threshold, then failing calls: each makes as
		// many attempts as grpc-go's throttler lets it.
		var script []bool
		for range int(math.Ceil(p.RetryTokens/2)) + 3 {
			script = append(script, true)
		}
		for range int(math.Ceil((p.RetryTokens/2+1)/p.RetryTokenRatio)) + 1 {
			script = append(script, false)
		}
		script = append(script, true, true, true)
		for i, fail := range script {
			h.set(fail)
			got := len(call(t, cc, h))
			want := 1
			if fail {
				want = th.failing(maxAttempts)
			} else {
				th.success()
			}
			if got != want {
				t.Errorf("call %d of the script (failing %v): %d attempts, want %d (tokens %.3f of %g)", i, fail, got, want, th.tokens, th.max)
				return
			}
		}
	})
}

// grpcPolicies are the answers and random policies whose grpc-go setting
// prints a service config (the grpc family with ±20 %, and any with gRPC
// retry throttling), with a few more attempts than grpc-go's default cap.
func grpcPolicies() []sim.Policy {
	var out []sim.Policy
	for _, p := range append(answers(), randomPolicies(2, 60)...) {
		if (p.Kind == sim.GRPC || p.RetryTokens > 0) && (p.MaxAttempts == 0 || p.MaxAttempts > 1) {
			if p.MaxAttempts == 0 && p.RetryTokens == 0 {
				p.MaxAttempts = 12 // 1000 attempts would take a while even in virtual time
			}
			out = append(out, p)
		}
	}
	return out
}
