//go:build !unix

package loadgen

// processCPU is not measured on this platform: Self.CPUSeconds stays 0.
func processCPU() float64 { return 0 }
