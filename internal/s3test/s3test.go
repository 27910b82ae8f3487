// Package s3test starts an S3-compatible server on loopback for tests:
// gofakes3 with its in-memory backend, in the test's process, stopped when
// the test ends. It honours If-None-Match: * and If-Match on PutObject
// atomically (gofakes3 checks them under the backend's lock, as S3 does);
// Unconditional gives a server that ignores them, as some stores do.
package s3test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Bucket is the bucket every server holds.
const Bucket = "herdsweep"

// Server is an S3-compatible server on loopback.
type Server struct {
	URL   string // its endpoint, http://127.0.0.1:PORT
	Clock *Clock // the clock that stamps its objects' LastModified
	// Requests counts the requests served.
	mu       sync.Mutex
	requests int
}

// Requests is how many requests the server has served.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Clock is a server's clock: this machine's, moved by Advance.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
}

// Now is the server's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset).In(time.FixedZone("GMT", 0))
}

// Since is the time since t by the server's clock.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Advance moves the server's clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// Options change the server.
type Options struct {
	// Unconditional drops If-None-Match and If-Match from PUTs: a store
	// that does not honour conditional writes.
	Unconditional bool
}

// Start starts a server holding an empty Bucket and points the AWS SDK's
// standard environment at it for the test (t.Setenv: not in parallel
// tests): endpoint, region, keys, and no shared config files.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{Clock: &Clock{}}
	backend := s3mem.New(s3mem.WithTimeSource(s.Clock))
	if err := backend.CreateBucket(Bucket); err != nil {
		t.Fatal(err)
	}
	// The clock stamps Last-Modified; requests are dated by this
	// machine's, which the server then does not compare with its own.
	h := gofakes3.New(backend, gofakes3.WithTimeSource(s.Clock), gofakes3.WithTimeSkewLimit(0)).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		s.mu.Unlock()
		if o.Unconditional && r.Method == http.MethodPut {
			r.Header.Del("If-None-Match")
			r.Header.Del("If-Match")
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_S3":         srv.URL,
		"AWS_ENDPOINT_URL":            "",
		"AWS_REGION":                  "us-east-1",
		"AWS_ACCESS_KEY_ID":           "test",
		"AWS_SECRET_ACCESS_KEY":       "test",
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             filepath.Join(dir, "none"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "none"),
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
	return s
}
