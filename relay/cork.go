package relay

import (
	"net"
	"sync"
)

// corkConn lies under the WebSocket library's writes. The library flushes
// after every message, which is one write(2) per frame; while the
// connection's writer sends a batch of queued frames it corks the
// connection, so that the frames gather in a buffer and the whole batch
// leaves in one write when it uncorks. Writes that the library makes on
// its own (pongs, close frames) gather too if they come during a batch,
// and go out at its end. The buffer is borrowed from a pool only while
// corked, so that an idle connection holds none.
type corkConn struct {
	net.Conn
	mu     sync.Mutex // serializes writes to Conn, in order
	corked bool
	buf    *[]byte
}

// corkMax bounds what gathers before it is written anyway.
const corkMax = 16 << 10

var corkBufs = sync.Pool{New: func() any { b := make([]byte, 0, corkMax); return &b }}

func (k *corkConn) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.corked {
		if k.buf == nil {
			k.buf = corkBufs.Get().(*[]byte)
		}
		if len(*k.buf)+len(p) > corkMax {
			if err := k.flushLocked(); err != nil {
				return 0, err
			}
		}
		if len(p) <= corkMax {
			*k.buf = append(*k.buf, p...)
			return len(p), nil
		}
	}
	return k.Conn.Write(p)
}

func (k *corkConn) flushLocked() error {
	if k.buf == nil || len(*k.buf) == 0 {
		return nil
	}
	_, err := k.Conn.Write(*k.buf)
	*k.buf = (*k.buf)[:0]
	return err
}

// cork starts gathering writes.
func (k *corkConn) cork() {
	k.mu.Lock()
	k.corked = true
	k.mu.Unlock()
}

// uncork writes what gathered and stops gathering.
func (k *corkConn) uncork() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.corked = false
	err := k.flushLocked()
	if k.buf != nil {
		corkBufs.Put(k.buf)
		k.buf = nil
	}
	return err
}
