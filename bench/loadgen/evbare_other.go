//go:build !linux

package main

import "errors"

func evbare([]string) error { return errors.New("evbare: Linux only") }
