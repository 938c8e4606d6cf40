package tokenizer

import (
	"strconv"
	"strings"
	"time"
)

// strftime formats t as Python's datetime.strftime (C locale) for the directives chat
// templates use; unknown directives are kept as written, as glibc does.
func strftime(t time.Time, f string) string {
	var b strings.Builder
	pad := func(n, w int, noPad bool) {
		s := strconv.Itoa(n)
		if !noPad {
			for len(s) < w {
				s = "0" + s
			}
		}
		b.WriteString(s)
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		noPad := false
		if f[i] == '-' && i+1 < len(f) {
			noPad = true
			i++
		}
		switch f[i] {
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'y':
			pad(t.Year()%100, 2, noPad)
		case 'm':
			pad(int(t.Month()), 2, noPad)
		case 'd':
			pad(t.Day(), 2, noPad)
		case 'e':
			s := strconv.Itoa(t.Day())
			if len(s) < 2 && !noPad {
				s = " " + s
			}
			b.WriteString(s)
		case 'H':
			pad(t.Hour(), 2, noPad)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			pad(h, 2, noPad)
		case 'M':
			pad(t.Minute(), 2, noPad)
		case 'S':
			pad(t.Second(), 2, noPad)
		case 'f':
			pad(t.Nanosecond()/1000, 6, false)
		case 'j':
			pad(t.YearDay(), 3, noPad)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'B':
			b.WriteString(t.Month().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			if noPad {
				b.WriteByte('-')
			}
			b.WriteByte(f[i])
		}
	}
	return b.String()
}
