// Package objstore is the object storage a dataset may lie in: an S3
// bucket, or a store that speaks S3's API (SeaweedFS, Ceph's RGW, Google
// Cloud Storage's XML API with HMAC keys), under a prefix. The dataset's
// store (package store) writes and checks a dataset through a Bucket as
// it does through a folder; readers read it through FS, an fs.FS whose
// files are dataset.File values.
//
// What the commit protocol needs of a bucket is create-only writes (a PUT
// with If-None-Match: *, refused with 412 when the key is there) and
// compare-and-swap (a PUT with If-Match on the ETag read, refused with 412
// when the object changed since), both atomic, and a LastModified stamped
// by the store's clock. Check proves the first two on the bucket before a
// writer writes anything: a store that ignores the headers is refused.
//
// The client is the AWS SDK for Go v2's S3 client: it sends If-None-Match
// and If-Match on PutObject, loads credentials, region and endpoint the
// standard way (AWS_* variables, shared config files, web identity in a
// Kubernetes pod), and the module's core was already a dependency.
// gocloud.dev's blob package has create-only writes (IfNotExist) but no
// If-Match on a write, which a lock's takeover needs; minio-go has both
// but a credential chain of its own.
package objstore
