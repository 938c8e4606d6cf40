// Package check is under construction.
package check
