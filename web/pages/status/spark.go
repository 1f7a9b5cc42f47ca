package status

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/querylens/querylens/history"
)

// Sparkline size, in CSS pixels (the browse page's rows are 30 px high).
const (
	sparkW = 96
	sparkH = 20
)

// Spark serves GET /s/{protocol}/{target}/spark.svg: the last 24 hours'
// player count as a tiny chart for the browse page's rows. It reads the
// store only (one indexed range of at most a day of samples): no query, no
// tracking, and no visitor limit, since a page shows a screenful at once.
func (h *Handler) Spark(w http.ResponseWriter, r *http.Request) {
	ref, ok := h.lookupNoLimit(w, r, true)
	if !ok {
		return
	}
	if h.History == nil {
		http.Error(w, "no history on this site", http.StatusNotFound)
		return
	}
	k := ref.Key()
	now := time.Now()
	samples, err := h.History.Samples(r.Context(), k, now.Add(-24*time.Hour), now.Add(time.Minute))
	if err != nil {
		h.Logger.Warn("spark", "key", k.String(), "err", err)
		http.Error(w, "history unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(sparkSVG(samples, now))
}

// sparkSVG draws samples as 48 half-hour columns of the mean player count.
func sparkSVG(samples []history.Sample, now time.Time) []byte {
	const n = 48
	var sum, cnt, total [n]int
	top := 1
	from := now.Add(-24 * time.Hour)
	for _, s := range samples {
		i := int(s.At.Sub(from) * n / (24 * time.Hour))
		if i < 0 || i >= n {
			continue
		}
		total[i]++
		top = max(top, s.MaxPlayers, s.Players)
		if s.State == history.StateOnline {
			sum[i] += s.Players
			cnt[i]++
		}
	}
	var b bytes.Buffer
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 96 20" width="96" height="20">`)
	b.WriteString(`<title>players, last 24 hours</title>`)
	b.WriteString(`<line x1="0" y1="19.5" x2="96" y2="19.5" stroke="#8d96a0" stroke-opacity="0.5"/>`)
	for i := range n {
		x := strconv.Itoa(i * sparkW / n)
		switch {
		case cnt[i] > 0:
			v := float64(sum[i]) / float64(cnt[i])
			hgt := max(1, int(v/float64(top)*float64(sparkH-1)+0.5))
			b.WriteString(`<rect x="` + x + `" y="` + strconv.Itoa(sparkH-1-hgt) + `" width="2" height="` + strconv.Itoa(hgt) + `" fill="#22c55e"/>`)
		case total[i] > 0: // sampled, never online
			b.WriteString(`<rect x="` + x + `" y="18" width="2" height="2" fill="#e05d44"/>`)
		}
	}
	b.WriteString(`</svg>`)
	return b.Bytes()
}

// TrackedJSON serves GET /history/tracked.json: the status paths of the
// tracked servers, for the browse page to know which rows get a sparkline.
func (h *Handler) TrackedJSON(w http.ResponseWriter, r *http.Request) {
	if h.History == nil {
		http.Error(w, "no history on this site", http.StatusNotFound)
		return
	}
	servers, err := h.History.Tracked(r.Context())
	if err != nil {
		h.Logger.Warn("tracked", "err", err)
		http.Error(w, "history unavailable", http.StatusServiceUnavailable)
		return
	}
	paths := make([]string, 0, len(servers))
	for _, s := range servers {
		paths = append(paths, "/s/"+s.Protocol+"/"+s.Addr)
	}
	sort.Strings(paths)
	b, _ := json.Marshal(map[string][]string{"servers": paths})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=60")
	w.Write(b)
}
