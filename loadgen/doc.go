// Package loadgen is under construction.
package loadgen
