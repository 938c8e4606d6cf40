// Package scenario is under construction.
package scenario
