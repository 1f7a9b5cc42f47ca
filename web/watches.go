package web

import "github.com/querylens/querylens/history"

// unbuffered is the store under a history.Buffered (PostgreSQL's, whose
// samples it holds while the database is down), or s itself: the
// alerts' watches are read from the database directly.
func unbuffered(s history.Store) any {
	if b, ok := s.(*history.Buffered); ok {
		return b.Store
	}
	return s
}
