// Package e2e holds end-to-end tests of the relay with the real protocol
// codecs (registered by codecs/all). They live apart from package relay so
// that the relay's own tests build and run without any codec package.
package e2e
