// Package sse is under construction.
package sse
