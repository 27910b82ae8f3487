package paste

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/herdsweep/herdsweep/sim"
)

const awsLibrary = "aws-sdk-go-v2"

// printedAWS is the retry.NewStandard(…) expression a setting prints.
func printedAWS(how string) (string, error) {
	i := strings.Index(how, "retry.NewStandard(")
	if i < 0 {
		return "", errors.New("no retry.NewStandard(…) in the text")
	}
	depth := 0
	for j := i; j < len(how); j++ {
		switch how[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return how[i : j+1], nil
			}
		}
	}
	return "", errors.New("retry.NewStandard( is not closed")
}

// yours stands for the retry.BackoffDelayerFunc a setting leaves to the
// caller ("yours").
var yours = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })

// buildAWS builds the retryer that the Go text src (retry.NewStandard(func(o
// *retry.StandardOptions) { o.F = v; … })) builds, with the real module:
// each assignment is evaluated and set on the options NewStandard hands
// its option function. It accepts what a setting may print: whole
// numbers, durations (time.Second, 30 * time.Second), ratelimit.None,
// ratelimit.NewTokenRateLimit(n) and retry.BackoffDelayerFunc(yours).
func buildAWS(src string) (*retry.Standard, error) {
	e, err := parser.ParseExpr(src)
	if err != nil {
		return nil, fmt.Errorf("not Go: %w", err)
	}
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 || exprString(call.Fun) != "retry.NewStandard" {
		return nil, fmt.Errorf("want retry.NewStandard(func …), got %s", exprString(e))
	}
	fn, ok := call.Args[0].(*ast.FuncLit)
	if !ok || len(fn.Type.Params.List) != 1 || exprString(fn.Type.Params.List[0].Type) != "*retry.StandardOptions" {
		return nil, errors.New("want a func(o *retry.StandardOptions)")
	}
	type assign struct {
		field string
		v     any
	}
	var as []assign
	for _, st := range fn.Body.List {
		a, ok := st.(*ast.AssignStmt)
		if !ok || len(a.Lhs) != 1 || len(a.Rhs) != 1 || a.Tok != token.ASSIGN {
			return nil, fmt.Errorf("want o.Field = value, got %T", st)
		}
		sel, ok := a.Lhs[0].(*ast.SelectorExpr)
		if !ok || exprString(sel.X) != fn.Type.Params.List[0].Names[0].Name {
			return nil, fmt.Errorf("want o.Field on the left, got %s", exprString(a.Lhs[0]))
		}
		v, err := eval(a.Rhs[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sel.Sel.Name, err)
		}
		as = append(as, assign{sel.Sel.Name, v})
	}
	var setErr error
	r := retry.NewStandard(func(o *retry.StandardOptions) {
		ov := reflect.ValueOf(o).Elem()
		for _, a := range as {
			f := ov.FieldByName(a.field)
			if !f.IsValid() {
				setErr = fmt.Errorf("StandardOptions has no field %s", a.field)
				return
			}
			v := reflect.ValueOf(a.v)
			if n, ok := a.v.(int64); ok && f.Kind() != reflect.Interface {
				v = reflect.ValueOf(n).Convert(f.Type())
			}
			if !v.Type().AssignableTo(f.Type()) {
				setErr = fmt.Errorf("%s: a %s cannot be set to a %s", a.field, v.Type(), f.Type())
				return
			}
			f.Set(v)
		}
	})
	return r, setErr
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	}
	return fmt.Sprintf("%T", e)
}

func eval(e ast.Expr) (any, error) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.INT {
			return strconv.ParseInt(e.Value, 10, 64)
		}
	case *ast.SelectorExpr:
		switch exprString(e) {
		case "time.Millisecond":
			return time.Millisecond, nil
		case "time.Second":
			return time.Second, nil
		case "time.Minute":
			return time.Minute, nil
		case "time.Hour":
			return time.Hour, nil
		case "ratelimit.None":
			return retry.RateLimiter(ratelimit.None), nil
		}
	case *ast.BinaryExpr:
		if e.Op == token.MUL {
			a, err := eval(e.X)
			if err != nil {
				return nil, err
			}
			b, err := eval(e.Y)
			if n, ok := a.(int64); ok && err == nil {
				if d, ok := b.(time.Duration); ok {
					return time.Duration(n) * d, nil
				}
			}
		}
	case *ast.CallExpr:
		if len(e.Args) == 1 {
			switch exprString(e.Fun) {
			case "ratelimit.NewTokenRateLimit":
				n, err := eval(e.Args[0])
				if err != nil {
					return nil, err
				}
				return retry.RateLimiter(ratelimit.NewTokenRateLimit(uint(n.(int64)))), nil
			case "retry.BackoffDelayerFunc":
				if exprString(e.Args[0]) == "yours" {
					return retry.BackoffDelayer(yours), nil
				}
			}
		}
	}
	return nil, fmt.Errorf("cannot evaluate %s", exprString(e))
}

// A 503 and a 429 as the SDK classifies them: a retryable error, and a
// throttling error (ThrottleErrorCode, DefaultThrottleErrorCodes).
type unavailable struct{}

func (unavailable) Error() string        { return "503" }
func (unavailable) RetryableError() bool { return true }

type throttled struct{}

func (throttled) Error() string     { return "429" }
func (throttled) ErrorCode() string { return "ThrottlingException" }

// retriesLeft counts the retry tokens the retryer grants in a row after
// err, up to most.
func retriesLeft(r *retry.Standard, err error, most int) int {
	for i := 0; i < most; i++ {
		if _, e := r.GetRetryToken(context.Background(), err); e != nil {
			return i
		}
	}
	return most
}

// grpcRetriesFromFull is gRPC's retry throttling from full tokens while
// every attempt fails, from grpc-go clientconn.go retryThrottler.throttle:
// each failure takes a token (not below 0) and the retry is refused once
// the tokens are ≤ maxTokens/2.
func grpcRetriesFromFull(maxTokens float64) int {
	tokens, n := maxTokens, 0
	for {
		tokens = math.Max(tokens-1, 0)
		if tokens <= maxTokens/2 {
			return n
		}
		n++
	}
}

// The aws-sdk-go-v2 retryer each setting prints builds with the real
// module and carries the policy's numbers: its attempt limit; the SDK's
// own backoff (retry behaviour 2.1: U(0, 1)·min(x·2^(n−1), MaxBackoff), x
// 1 s after a throttling error, jitter_backoff.go backoffDelay2026) draws
// the policy's delays where the setting says it is exact; and its retry
// quota holds the retries the policy's per-client bucket pays for, or, for
// gRPC retry throttling, as many retries from full as gRPC lets through
// and one more per 1/tokenRatio successes.
func TestAWSRetryerPastes(t *testing.T) {
	t.Parallel()
	builtin := 0
	for _, p := range awsPolicies() {
		var st *sim.Setting
		settings := p.Settings()
		for i := range settings {
			if settings[i].Library == awsLibrary {
				st = &settings[i]
			}
		}
		if st == nil {
			t.Errorf("%s: no %s setting", p.Short(), awsLibrary)
			continue
		}
		src, err := printedAWS(st.How)
		if err != nil {
			t.Errorf("%s: %s: %v in %q", p.Short(), awsLibrary, err, st.How)
			continue
		}
		r, err := buildAWS(src)
		if err != nil {
			t.Errorf("%s: %s: %v", p.Short(), src, err)
			continue
		}
		want := p.AttemptLimit()
		if p.BucketTokens > 0 {
			want = p.MaxAttempts // the bucket is the quota's
		}
		if want == 0 {
			want = 1000
		}
		if p.RetryTokens > 0 && p.BucketTokens == 0 && grpcRetriesFromFull(p.RetryTokens) == 0 {
			want = 1 // gRPC's throttling with maxTokens ≤ 2 lets no retry through
		}
		if got := r.MaxAttempts(); got != want {
			t.Errorf("%s: %s: MaxAttempts %d, want %d", p.Short(), src, got, want)
		}
		checkAWSQuota(t, p, src, r)
		if !strings.Contains(src, "BackoffDelayerFunc") { // the SDK's own backoff: the setting says it draws the policy's delays
			builtin++
			checkAWSDelays(t, p, src, r)
		}
	}
	if builtin < 10 {
		t.Errorf("%d settings use the SDK's own backoff; the policies should give at least 10", builtin)
	}
}

func checkAWSQuota(t *testing.T, p sim.Policy, src string, r *retry.Standard) {
	t.Helper()
	const most = 5000
	switch {
	case p.BucketTokens > 0:
		if got, want := retriesLeft(r, unavailable{}, most), p.BucketTokens/p.BucketCost; got != want {
			t.Errorf("%s: %s: %d retries from a full quota, want the bucket's %d", p.Short(), src, got, want)
		}
	case p.RetryTokens > 0 && grpcRetriesFromFull(p.RetryTokens) > 0:
		want := grpcRetriesFromFull(p.RetryTokens)
		if got := retriesLeft(r, unavailable{}, most); got != want {
			t.Errorf("%s: %s: %d retries from a full quota, want gRPC's %d", p.Short(), src, got, want)
		}
		perRetry := int(math.Round(1 / p.RetryTokenRatio))
		ctx := context.Background()
		for i := 0; i < perRetry; i++ { // first attempts that succeed
			release, err := r.GetAttemptToken(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := release(nil); err != nil {
				t.Fatal(err)
			}
		}
		if got := retriesLeft(r, throttled{}, most); got != 1 {
			t.Errorf("%s: %s: %d retries after %d successes, want 1 (gRPC: one per 1/tokenRatio)", p.Short(), src, got, perRetry)
		}
	case p.RetryTokens == 0:
		if got := retriesLeft(r, throttled{}, most); got != most {
			t.Errorf("%s: %s: the quota ran dry after %d retries; the policy has none", p.Short(), src, got)
		}
	}
}

// checkAWSDelays draws each of the first retries' delays many times after
// a 503 and after a 429: every one within the policy's range, and the
// largest near its top.
func checkAWSDelays(t *testing.T, p sim.Policy, src string, r *retry.Standard) {
	t.Helper()
	const draws = 300 // P(the largest of 300 U(0, 1) < 0.9) = 0.9^300 < 1e-13
	for n := 1; n <= 10; n++ {
		top := policyRange(p, n)
		for _, err := range []error{unavailable{}, throttled{}} {
			var hi time.Duration
			for range draws {
				d, e := r.RetryDelay(n, err)
				if e != nil {
					t.Fatal(e)
				}
				if d < 0 || d > top {
					t.Fatalf("%s: %s: retry %d after %v waits %v, outside [0, %v]", p.Short(), src, n, err, d, top)
				}
				hi = max(hi, d)
			}
			if float64(hi) < 0.9*float64(top) {
				t.Errorf("%s: %s: retry %d after %v: the longest of %d waits is %v, want near %v", p.Short(), src, n, err, draws, hi, top)
			}
		}
	}
}

// policyRange is the top of the policy's n-th delay, for the families
// whose delays are U(0, top): api-core U(0, min(cap, base·m^(n−1))) and
// full-jitter U(0, min(cap, base·m^n)) (sim families).
func policyRange(p sim.Policy, n int) time.Duration {
	e := float64(n - 1)
	if p.Kind == sim.FullJitter {
		e = float64(n)
	}
	return min(p.Cap, time.Duration(float64(p.Base)*math.Pow(p.Multiplier, e)))
}
