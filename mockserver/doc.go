// Package mockserver is under construction.
package mockserver
