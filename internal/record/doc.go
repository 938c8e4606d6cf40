// Package record is under construction.
package record
