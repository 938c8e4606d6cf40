// Package examples_test holds end-to-end scenarios that double as documentation. They
// run perftest against the in-process mock as a user's test would, and keep the
// README's quick start compiling.
package examples_test
