package mumble

import "encoding/binary"

// AppendRequest appends the ping to dst. It cannot fail; the error is
// there for the shape every codec shares.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	dst = append(dst, 0, 0, 0, 0)
	return binary.BigEndian.AppendUint64(dst, q.Ident), nil
}

// AppendResponse appends the answer to a ping to dst (what the demo
// servers send). A version with its top byte set is written as it is.
func AppendResponse(dst []byte, r Response) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(r.Version))
	dst = binary.BigEndian.AppendUint64(dst, r.Ident)
	dst = binary.BigEndian.AppendUint32(dst, r.Users)
	dst = binary.BigEndian.AppendUint32(dst, r.MaxUsers)
	return binary.BigEndian.AppendUint32(dst, r.Bandwidth)
}

// NewVersion is the Version of major.minor.patch.
func NewVersion(major, minor, patch uint8) Version {
	return Version(uint32(major)<<16 | uint32(minor)<<8 | uint32(patch))
}
