package parquetio

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/herdsweep/herdsweep/dataset"
)

// A part is sealed when it is written: its footer's key-value metadata
// holds dataset.KeyPartSHA256, the SHA-256 of the whole file read with that
// value's 64 hex digits as 64 zeros. Any later change to the file, one
// byte anywhere (the footer and the checksum itself included), is found by
// Verify without decoding a row; readers need not look at it, `sweep
// check` and a resumed `sweep run` do. A file written before sealing (or
// by another tool) carries none: it is read strictly instead
// (ReadRunsStrict).

// unsealed is the value the writer puts in the footer, replaced by the
// checksum once the file is whole.
var unsealed = bytes.Repeat([]byte{'0'}, sha256.Size*2)

// sealedBy is the footer's created_by of a sealed file: a second mark of
// the seal, so that a change that damages the checksum's key is found too.
const sealedBy = "herdsweep (sealed)"

// sealPattern is what precedes the checksum in the footer: the key, then
// the Thrift compact header of the KeyValue's field 2 (binary) and its
// length, 64. The value is found by this pattern rather than by decoding
// the footer, so that a footer too damaged to decode is still checked.
var sealPattern = append([]byte(dataset.KeyPartSHA256), 0x18, 0x40)

// footer returns the bytes of a Parquet file's footer (its Thrift
// FileMetaData) and where it starts.
func footer(r io.ReaderAt, size int64) ([]byte, int64, error) {
	if size < 12 {
		return nil, 0, errors.New("not a Parquet file: too short")
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, 0, err
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if string(tail[4:]) != "PAR1" || n > size-12 {
		return nil, 0, errors.New("not a Parquet file: no footer")
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, size-8-n); err != nil {
		return nil, 0, err
	}
	return b, size - 8 - n, nil
}

// sealAt finds the checksum's value in a footer: its offset there, or -1
// when the file carries none.
func sealAt(foot []byte) (int, error) {
	i := bytes.Index(foot, sealPattern)
	if i < 0 {
		return -1, nil
	}
	if bytes.Count(foot, sealPattern) > 1 {
		return 0, fmt.Errorf("corrupt Parquet file: %s recorded twice", dataset.KeyPartSHA256)
	}
	at := i + len(sealPattern)
	if at+len(unsealed) > len(foot) {
		return 0, fmt.Errorf("corrupt Parquet file: %s cut short", dataset.KeyPartSHA256)
	}
	return at, nil
}

// seal replaces the placeholder in the footer of the whole file b by the
// file's checksum, and returns it (its 64 hex digits).
func seal(b []byte) (string, error) {
	foot, start, err := footer(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return "", fmt.Errorf("parquetio: sealing: %w", err)
	}
	at, err := sealAt(foot)
	if err != nil || at < 0 || !bytes.Equal(foot[at:at+len(unsealed)], unsealed) {
		return "", fmt.Errorf("parquetio: sealing: no placeholder for %s in the footer (%v)", dataset.KeyPartSHA256, err)
	}
	sum := sha256.Sum256(b)
	hex.Encode(b[start+int64(at):], sum[:])
	return hex.EncodeToString(sum[:]), nil
}

// Verify checks a part against the checksum it was sealed with: sealed
// is false when it carries none (written before sealing, or by another
// tool), and err says how it differs when the file changed since.
func Verify(r io.ReaderAt, size int64) (sealed bool, err error) {
	_, sealed, err = verify(r, size)
	return sealed, err
}

// Seal is Verify that returns the checksum the part was sealed with (its
// 64 hex digits, as the writer's Checksum gave it) once it has found the
// file still holds it; "" when the part carries none.
func Seal(r io.ReaderAt, size int64) (string, error) {
	sum, _, err := verify(r, size)
	return sum, err
}

// verify is Verify, with the checksum found.
func verify(r io.ReaderAt, size int64) (sum string, sealed bool, err error) {
	foot, start, err := footer(r, size)
	if err != nil {
		return "", false, err
	}
	at, err := sealAt(foot)
	if err != nil {
		return "", true, err
	}
	if at < 0 {
		if bytes.Contains(foot, []byte(sealedBy)) {
			return "", true, fmt.Errorf("corrupt Parquet file: written sealed, its %s is gone or damaged", dataset.KeyPartSHA256)
		}
		return "", false, nil
	}
	want := foot[at : at+len(unsealed)]
	if bytes.Equal(want, unsealed) {
		return "", false, nil
	}
	var got [sha256.Size]byte
	if _, err := hex.Decode(got[:], want); err != nil {
		return "", true, fmt.Errorf("corrupt Parquet file: %s is %q, not a SHA-256", dataset.KeyPartSHA256, want)
	}
	h := sha256.New()
	pos := start + int64(at) // where the checksum's digits are, read as zeros
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, pos)); err != nil {
		return "", true, err
	}
	h.Write(unsealed)
	if _, err := io.Copy(h, io.NewSectionReader(r, pos+int64(len(unsealed)), size-pos-int64(len(unsealed)))); err != nil {
		return "", true, err
	}
	if sum := h.Sum(nil); hex.EncodeToString(sum) != string(want) { // as written: lower case
		return "", true, fmt.Errorf("corrupt Parquet file: its bytes changed since it was written (sha256 %x…, sealed as %x…)", sum[:6], got[:6])
	}
	return string(want), true, nil
}

// VerifySeeker is Verify of a file read through a Seeker.
func VerifySeeker(r interface {
	io.ReaderAt
	io.Seeker
}) (bool, error) {
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return false, err
	}
	return Verify(r, size)
}
