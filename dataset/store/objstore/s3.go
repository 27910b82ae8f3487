package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// s3Bucket is a bucket of an S3-compatible store, through the AWS SDK.
type s3Bucket struct {
	client *s3.Client
	name   string
	scheme string
}

var (
	dialMu sync.Mutex
	dialed = map[string]Bucket{}
)

// Open returns the bucket of an object storage URL (Split) and the prefix
// it names. The client is configured the standard way: credentials,
// AWS_REGION and the endpoint (AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL)
// from the environment and the shared config files. With an endpoint of
// its own the store is S3-compatible, addressed path-style
// (endpoint/bucket/key). gs:// is Google Cloud Storage's S3-compatible
// XML API (https://storage.googleapis.com unless an endpoint is set), with
// HMAC keys as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func Open(ctx context.Context, url string) (Bucket, string, error) {
	scheme, name, prefix, ok := Split(url)
	if !ok || name == "" {
		return nil, "", fmt.Errorf("%s: want s3://BUCKET/PREFIX or gs://BUCKET/PREFIX", url)
	}
	endpoint := os.Getenv("AWS_ENDPOINT_URL_S3")
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL")
	}
	if endpoint == "" && scheme == "gs" {
		endpoint = "https://storage.googleapis.com"
	}
	key := strings.Join([]string{scheme, name, endpoint, os.Getenv("AWS_REGION"), os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_PROFILE")}, "\x00")
	dialMu.Lock()
	defer dialMu.Unlock()
	if b, ok := dialed[key]; ok {
		return b, prefix, nil
	}
	opts := []func(*config.LoadOptions) error{
		// Stores that speak S3 take a payload whole, without the
		// checksums of newer SDKs' defaults.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" && endpoint != "" {
		opts = append(opts, config.WithRegion("us-east-1")) // most S3-compatible stores take any
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("%s: configuring the S3 client: %w", url, err)
	}
	if cfg.Region == "" && endpoint == "" {
		return nil, "", fmt.Errorf("%s: no region: set AWS_REGION (or AWS_DEFAULT_REGION, or a profile's region), or AWS_ENDPOINT_URL_S3 for an S3-compatible store", url)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
	})
	b := &s3Bucket{client: client, name: name, scheme: scheme}
	dialed[key] = b
	return b, prefix, nil
}

// status is the HTTP status of a failed request; 0 when there was none.
func status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func (b *s3Bucket) wrap(op, key string, err error) error {
	if ae := smithy.APIError(nil); errors.As(err, &ae) && ae.ErrorCode() == "NoSuchBucket" {
		return fmt.Errorf("%s %s: the store has no bucket %s: %w", op, b.url(key), b.name, fs.ErrNotExist)
	}
	if status(err) == http.StatusNotFound {
		return &fs.PathError{Op: op, Path: b.url(key), Err: fs.ErrNotExist}
	}
	return fmt.Errorf("%s %s: %w", op, b.url(key), err)
}

func (b *s3Bucket) url(key string) string { return b.scheme + "://" + b.name + "/" + key }

func (b *s3Bucket) Get(ctx context.Context, key string) ([]byte, Object, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.name, Key: &key})
	if err != nil {
		return nil, Object{}, b.wrap("get", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, Object{}, b.wrap("get", key, err)
	}
	return data, Object{Key: key, Size: int64(len(data)), ETag: aws.ToString(out.ETag), Modified: aws.ToTime(out.LastModified)}, nil
}

func (b *s3Bucket) Head(ctx context.Context, key string) (Object, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.name, Key: &key})
	if err != nil {
		return Object{}, b.wrap("head", key, err)
	}
	return Object{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), Modified: aws.ToTime(out.LastModified)}, nil
}

func (b *s3Bucket) List(ctx context.Context, prefix string) ([]Object, []string, error) {
	var objs []Object
	var dirs []string
	in := &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: &prefix, Delimiter: aws.String("/")}
	for p := s3.NewListObjectsV2Paginator(b.client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, nil, b.wrap("list", prefix, err)
		}
		for _, o := range page.Contents {
			objs = append(objs, Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ETag: aws.ToString(o.ETag), Modified: aws.ToTime(o.LastModified)})
		}
		for _, d := range page.CommonPrefixes {
			dirs = append(dirs, aws.ToString(d.Prefix))
		}
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Key < objs[j].Key })
	sort.Strings(dirs)
	return objs, dirs, nil
}

func (b *s3Bucket) put(ctx context.Context, key string, data []byte, cond func(*s3.PutObjectInput)) (Object, error) {
	in := &s3.PutObjectInput{Bucket: &b.name, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
	if cond != nil {
		cond(in)
	}
	var out *s3.PutObjectOutput
	var err error
	for attempt := 0; ; attempt++ {
		in.Body = bytes.NewReader(data)
		out, err = b.client.PutObject(ctx, in)
		// 409: a conditional write to the key raced another; S3 asks
		// for the write again.
		if status(err) != http.StatusConflict || attempt == 4 {
			break
		}
		time.Sleep(time.Duration(50<<attempt) * time.Millisecond)
	}
	if err != nil {
		return Object{}, err
	}
	return Object{Key: key, Size: int64(len(data)), ETag: aws.ToString(out.ETag)}, nil
}

func (b *s3Bucket) Put(ctx context.Context, key string, data []byte) (Object, error) {
	o, err := b.put(ctx, key, data, nil)
	if err != nil {
		return o, b.wrap("put", key, err)
	}
	return o, nil
}

func (b *s3Bucket) Create(ctx context.Context, key string, data []byte) (Object, error) {
	o, err := b.put(ctx, key, data, func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if status(err) == http.StatusPreconditionFailed {
		return o, &fs.PathError{Op: "create", Path: b.url(key), Err: fs.ErrExist}
	}
	if err != nil {
		return o, b.wrap("create", key, err)
	}
	return o, nil
}

func (b *s3Bucket) Swap(ctx context.Context, key, etag string, data []byte) (Object, error) {
	o, err := b.put(ctx, key, data, func(in *s3.PutObjectInput) { in.IfMatch = aws.String(etag) })
	if s := status(err); s == http.StatusPreconditionFailed || s == http.StatusNotFound {
		return o, fmt.Errorf("swap %s: %w", b.url(key), ErrChanged)
	}
	if err != nil {
		return o, b.wrap("swap", key, err)
	}
	return o, nil
}

func (b *s3Bucket) Delete(ctx context.Context, key string) error {
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.name, Key: &key})
	if err != nil && status(err) != http.StatusNotFound {
		return b.wrap("delete", key, err)
	}
	return nil
}
