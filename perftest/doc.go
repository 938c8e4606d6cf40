// Package perftest is under construction.
package perftest
