package distribution

import (
	"math"
)

// This file computes the distribution of the Kolmogorov–Smirnov statistics with the
// method choices of SciPy's kstwo / kstwobign / smirnov (Simard & L'Ecuyer 2011), so
// p-values agree with scipy.stats.kstest to ~1e-9 or better:
//   - n·d ≤ 1 or n·d ≥ n-1: the closed forms of Ruben & Gambino;
//   - d ≥ 1/2: exactly 2·P(D⁺ ≥ d) (one-sided events are disjoint);
//   - n ≤ 140: Durbin's matrix method as Marsaglia, Tsang & Wang (2003) evaluate it for
//     n d² ≤ 0.754693, Pomeranz's recursion for n d² ≤ 4, else 2·P(D⁺ ≥ d);
//   - n > 140: 2·P(D⁺ ≥ d) when n d² ≥ 2.2 (the neglected intersection term is below
//     1e-16 there), otherwise 1 - CDF with the Durbin/MTW matrix when n d^1.5 ≤ 1.4 and
//     the Pelz–Good expansion elsewhere.
// P(D⁺ ≥ d) is the exact Birnbaum–Tingey sum, evaluated in logarithms.

// KolmogorovSF returns P(D_n >= d) for the two-sided one-sample KS statistic D_n of a
// sample of size n from a continuous distribution (scipy.stats.kstwo.sf).
func KolmogorovSF(n int, d float64) float64 {
	if n <= 0 {
		return math.NaN()
	}
	if d >= 1 {
		return 0
	}
	if d <= 0 {
		return 1
	}
	nf := float64(n)
	t := nf * d
	if t <= 1 {
		if t <= 0.5 {
			return 1
		}
		var p float64
		if n <= 140 {
			p = 1
			for i := 1; i <= n; i++ {
				p *= float64(i) * (1 / nf) * (2*t - 1)
			}
		} else {
			p = math.Exp(logFactorialOverPow(n) + nf*math.Log(2*t-1))
		}
		return clip01(1 - p)
	}
	if t >= nf-1 {
		return clip01(2 * math.Pow(1-d, nf))
	}
	if d >= 0.5 {
		return clip01(2 * SmirnovSF(n, d))
	}
	nx2 := t * d
	if n <= 140 {
		if nx2 <= 0.754693 {
			return clip01(1 - durbinMTW(n, d))
		}
		if nx2 <= 4 {
			return clip01(1 - pomeranz(n, d))
		}
		return clip01(2 * SmirnovSF(n, d))
	}
	if nx2 >= 370 {
		return 0
	}
	if nx2 >= 2.2 {
		return clip01(2 * SmirnovSF(n, d))
	}
	var cdf float64
	switch {
	case nx2 >= 18:
		cdf = 1
	case n <= 100000 && nf*math.Pow(d, 1.5) <= 1.4:
		cdf = durbinMTW(n, d)
	default:
		cdf = pelzGood(n, d)
	}
	return clip01(1 - cdf)
}

// KolmogorovAsympSF returns the limiting P(sqrt(n) D_n >= z) = 2 Σ (-1)^(k-1) exp(-2k²z²)
// (scipy.special.kolmogorov, scipy.stats.kstwobign.sf).
func KolmogorovAsympSF(z float64) float64 {
	if z <= 0 {
		return 1
	}
	if z < 0.82 {
		// CDF by the theta-function series, converging fast for small z.
		s := 0.0
		w := math.Pi * math.Pi / (8 * z * z)
		for k := 1; k < 100; k++ {
			m := float64(2*k - 1)
			term := math.Exp(-m * m * w)
			s += term
			if term < 1e-20*s {
				break
			}
		}
		return clip01(1 - math.Sqrt(2*math.Pi)/z*s)
	}
	s := 0.0
	sign := 1.0
	for k := 1; k < 100; k++ {
		kf := float64(k)
		term := math.Exp(-2 * kf * kf * z * z)
		s += sign * term
		sign = -sign
		if term < 1e-20 {
			break
		}
	}
	return clip01(2 * s)
}

// SmirnovSF returns P(D⁺_n >= d) for the one-sided KS statistic (scipy.special.smirnov),
// by the exact Birnbaum–Tingey formula
// d Σ_{j=0}^{⌊n(1-d)⌋} C(n,j) (d + j/n)^(j-1) (1 - d - j/n)^(n-j).
func SmirnovSF(n int, d float64) float64 {
	if n <= 0 || math.IsNaN(d) {
		return math.NaN()
	}
	if d <= 0 {
		return 1
	}
	if d >= 1 {
		return 0
	}
	nf := float64(n)
	if n == 1 {
		return 1 - d
	}
	jmax := int(math.Floor(nf * (1 - d)))
	if float64(jmax) >= nf*(1-d) { // the last term is 0^(n-j) = 0 unless j = n
		jmax--
	}
	// Sum exp(log terms), scaled by the largest term.
	logs := make([]float64, 0, jmax+1)
	lc := 0.0 // log C(n, j)
	best := math.Inf(-1)
	for j := 0; j <= jmax; j++ {
		if j > 0 {
			lc += math.Log(float64(n-j+1) / float64(j))
		}
		jf := float64(j)
		a := d + jf/nf
		b := 1 - d - jf/nf
		if b <= 0 {
			break
		}
		l := lc + (jf-1)*math.Log(a) + (nf-jf)*math.Log(b)
		logs = append(logs, l)
		best = math.Max(best, l)
	}
	s := 0.0
	for _, l := range logs {
		s += math.Exp(l - best)
	}
	return clip01(d * s * math.Exp(best))
}

func clip01(p float64) float64 { return math.Max(0, math.Min(1, p)) }

var stirling = []float64{-2.955065359477124183e-2, 6.4102564102564102564e-3,
	-1.9175269175269175269e-3, 8.4175084175084175084e-4,
	-5.952380952380952381e-4, 7.9365079365079365079e-4,
	-2.7777777777777777778e-3, 8.3333333333333333333e-2}

// logFactorialOverPow returns log(n!/n^n) by Stirling's series.
func logFactorialOverPow(n int) float64 {
	nf := float64(n)
	rn := 1 / nf
	x := rn / nf
	poly := 0.0
	for _, c := range stirling {
		poly = poly*x + c
	}
	return math.Log(nf)/2 - nf + math.Log(2*math.Pi)/2 + rn*poly
}

// durbinMTW returns P(D_n <= d) by Durbin's matrix formula, computed as Marsaglia, Tsang
// & Wang (2003): the (k,k) entry of H^n times n!/n^n, with d = (k - h)/n, 0 <= h < 1,
// H of order m = 2k-1, powers tracked with a separate binary exponent.
func durbinMTW(n int, d float64) float64 {
	nd := float64(n) * d
	if d >= 1 {
		return 1
	}
	if nd <= 0.5 {
		return 0
	}
	k := int(math.Ceil(nd))
	h := float64(k) - nd
	m := 2*k - 1
	H := make([]float64, m*m)
	v := make([]float64, m)
	w := make([]float64, m)
	fac := 1.0
	for j := 1; j <= m; j++ {
		w[j-1] = fac
		fac /= float64(j)
		v[j-1] = (1 - math.Pow(h, float64(j))) * fac
	}
	tt := math.Pow(math.Max(2*h-1, 0), float64(m)) - 2*math.Pow(h, float64(m))
	v[m-1] = (1 + tt) * fac
	for i := 1; i < m; i++ {
		for r := i - 1; r < m; r++ {
			H[r*m+i] = w[r-(i-1)]
		}
	}
	for r := 0; r < m; r++ {
		H[r*m] = v[r]
	}
	for c := 0; c < m; c++ {
		H[(m-1)*m+c] = v[m-1-c]
	}
	// P = H^n with exponent tracking.
	P := make([]float64, m*m)
	for i := 0; i < m; i++ {
		P[i*m+i] = 1
	}
	tmp := make([]float64, m*m)
	pexp, hexp := 0, 0
	const scale = 128
	for nn := n; nn > 0; nn >>= 1 {
		if nn&1 == 1 {
			matmul(tmp, P, H, m)
			P, tmp = tmp, P
			pexp += hexp
			if math.Abs(P[(k-1)*m+k-1]) > 0x1p128 {
				scaleMat(P, 0x1p-128)
				pexp += scale
			}
		}
		if nn > 1 {
			matmul(tmp, H, H, m)
			H, tmp = tmp, H
			hexp *= 2
			if math.Abs(H[(k-1)*m+k-1]) > 0x1p128 {
				scaleMat(H, 0x1p-128)
				hexp += scale
			}
		}
	}
	p := P[(k-1)*m+k-1]
	nf := float64(n)
	for i := 1; i <= n; i++ {
		p = float64(i) * p / nf
		if math.Abs(p) < 0x1p-128 {
			p *= 0x1p128
			pexp -= scale
		}
	}
	return clip01(math.Ldexp(p, pexp))
}

func matmul(dst, a, b []float64, m int) {
	clear(dst)
	for i := 0; i < m; i++ {
		for l := 0; l < m; l++ {
			ail := a[i*m+l]
			if ail == 0 {
				continue
			}
			row := b[l*m : l*m+m]
			out := dst[i*m : i*m+m]
			for j, bv := range row {
				out[j] += ail * bv
			}
		}
	}
}

func scaleMat(a []float64, f float64) {
	for i := range a {
		a[i] *= f
	}
}

// pomeranz returns P(D_n <= d) by Pomeranz's (1974) recursion, keeping two rows and the
// few non-zero entries of each.
func pomeranz(n int, x float64) float64 {
	nf := float64(n)
	t := nf * x
	ll := int(math.Floor(t))
	f := t - float64(ll)
	g := math.Min(f, 1-f)
	ceilf, roundf := 0, 0
	if f > 0 {
		ceilf = 1
	}
	if f > 0.5 {
		roundf = 1
	}
	npw := 2 * (ll + 1)
	gp := make([]float64, npw)
	g2p := make([]float64, npw)
	g12p := make([]float64, npw)
	gp[0], g2p[0], g12p[0] = 1, 1, 1
	for m := 1; m < npw; m++ {
		mf := float64(m)
		gp[m] = gp[m-1] * (g / nf) / mf
		g2p[m] = g2p[m-1] * (2 * g / nf) / mf
		g12p[m] = g12p[m-1] * ((1 - 2*g) / nf) / mf
	}
	V0 := make([]float64, npw)
	V1 := make([]float64, npw)
	V1[0] = 1
	v0s, v1s := 0, 0
	expnt := 0
	bounds := func(i int) (int, int) {
		var j1, j2 int
		if i == 0 {
			j1, j2 = -ll-ceilf-1, ll+ceilf-1
		} else {
			q, r := (i+1)/2, (i+1)%2
			if r == 0 {
				if q == n+1 {
					j1, j2 = n-ll-ceilf-1, n+ll+ceilf-1
				} else {
					j1, j2 = q-1-ll-roundf-1, q+ll-1+ceilf-1
				}
			} else {
				j1, j2 = q-1-ll-1, q+ll+roundf-1
			}
		}
		return max(j1+2, 0), min(j2, n)
	}
	j1, _ := bounds(0)
	var j2 int
	conv := make([]float64, 2*npw)
	for i := 1; i < 2*n+2; i++ {
		k1 := j1
		V0, V1 = V1, V0
		v0s, v1s = v1s, v0s
		clear(V1)
		j1, j2 = bounds(i)
		var pw []float64
		switch {
		case i == 1 || i == 2*n+1:
			pw = gp
		case i%2 == 1:
			pw = g2p
		default:
			pw = g12p
		}
		ln2 := j2 - k1 + 1
		if ln2 <= 0 {
			continue
		}
		a := V0[k1-v0s : k1-v0s+ln2]
		b := pw[:ln2]
		cs := j1 - k1
		cl := j2 - j1 + 1
		// full convolution entries cs..cs+cl-1
		for r := 0; r < cl; r++ {
			idx := cs + r
			s := 0.0
			for p := max(0, idx-(ln2-1)); p <= min(idx, ln2-1); p++ {
				s += a[p] * b[idx-p]
			}
			conv[r] = s
		}
		copy(V1[:cl], conv[:cl])
		mx := 0.0
		for _, v := range V1 {
			mx = math.Max(mx, v)
		}
		if mx > 0 && mx < 0x1p-128 {
			scaleMat(V1, 0x1p128)
			expnt -= 128
		}
		v1s = v0s + j1 - k1
	}
	ans := V1[n-v1s]
	for m := 1; m <= n; m++ {
		if math.Abs(ans) > 0x1p128 {
			ans *= 0x1p-128
			expnt += 128
		}
		ans *= float64(m)
	}
	return clip01(math.Ldexp(ans, expnt))
}

// pelzGood returns the Pelz–Good (1976) approximation to P(D_n <= x).
func pelzGood(n int, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	nf := float64(n)
	z := math.Sqrt(nf) * x
	z2, z3, z4, z6 := z*z, z*z*z, z*z*z*z, math.Pow(z, 6)
	pi2 := math.Pi * math.Pi
	pi4 := pi2 * pi2
	pi6 := pi4 * pi2
	qlog := -pi2 / 8 / z2
	if qlog < -708 {
		return 0
	}
	q := math.Exp(qlog)
	k1a, k1b := -z2, pi2/4
	k2a := 6*z6 + 2*z4
	k2b := (2*z4 - 5*z2) * pi2 / 4
	k2c := pi4 * (1 - 2*z2) / 16
	k3d := pi6 * (5 - 30*z2) / 64
	k3c := pi4 * (-60*z2 + 212*z4) / 16
	k3b := pi2 * (135*z4 - 96*z6) / 4
	k3a := -30*z6 - 90*math.Pow(z, 8)
	var K [4]float64
	maxk := int(math.Ceil(16 * z / math.Pi))
	for k := maxk; k >= 1; k-- {
		m := float64(2*k - 1)
		m2 := m * m
		m4 := m2 * m2
		m6 := m4 * m2
		qp := math.Pow(q, float64(8*k))
		c := [4]float64{1, k1a + k1b*m2, k2a + k2b*m2 + k2c*m4, k3a + k3b*m2 + k3c*m4 + k3d*m6}
		for i := range K {
			K[i] = K[i]*qp + c[i]
		}
	}
	s2pi := math.Sqrt(2 * math.Pi)
	div := [4]float64{z, 6 * z4, 72 * math.Pow(z, 7), 6480 * math.Pow(z, 10)}
	for i := range K {
		K[i] = K[i] * q * s2pi / div[i]
	}
	q = math.Exp(-pi2 / 2 / z2)
	var k2x, k3x float64
	s3z := math.Sqrt(3) * z
	for k := maxk; k >= 1; k-- {
		kf := float64(k)
		ks := kf * kf
		qk := math.Pow(q, ks)
		k2x += ks * qk
		kp := math.Pi * kf
		k3x += (s3z + kp) * (s3z - kp) * ks * qk
	}
	K[2] += k2x * pi2 * s2pi / (-36 * z3)
	K[3] += k3x * pi2 * s2pi / (216 * z6)
	sum := 0.0
	for i := range K {
		sum += K[i] / math.Pow(nf, float64(i)/2)
	}
	return sum
}
