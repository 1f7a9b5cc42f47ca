package masters

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"

	"github.com/querylens/querylens/codecs/a2s"
)

// With a Steam Web API key, Steam masters' lists come from the Web API.
func init() {
	registerAdapter(a2s.Protocol, func(k *Keeper, ctx context.Context, l *list, f *fetch, progress func()) bool {
		if k.cfg.SteamWebAPIKey == "" {
			return false
		}
		k.fetchWebAPI(ctx, l, f, progress)
		return true
	})
}

// The Steam Web API's server list: IGameServersService/GetServerList
// (partner.steamgames.com, "IGameServersService Interface") takes the same
// filter as the master (\appid\440…) and a limit, and answers in one JSON
// document, with the key of a Steam account. With Config.SteamWebAPIKey
// set, a Steam master's list comes from it instead of the UDP master.
const (
	// SteamWebAPI is the Web API's base URL.
	SteamWebAPI = "https://api.steampowered.com"
	// maxWebAPIBody bounds the JSON read: about 200 bytes per server.
	maxWebAPIBody = 64 << 20
)

type webAPIReply struct {
	Response struct {
		Servers []struct {
			Addr string `json:"addr"` // ip:queryport
		} `json:"servers"`
	} `json:"response"`
}

// fetchWebAPI asks the Steam Web API for a Steam master's list. The key
// goes in the query string, as the API wants it; no error, log line or
// page ever carries the URL, so the key stays with the operator.
func (k *Keeper) fetchWebAPI(ctx context.Context, l *list, f *fetch, progress func()) {
	if err := wait(ctx, k.cfg.Pacer, "steam-web-api", k.cfg.Sleep); err != nil {
		f.err = "stopped: " + err.Error()
		return
	}
	v := url.Values{}
	v.Set("key", k.cfg.SteamWebAPIKey)
	v.Set("limit", strconv.Itoa(k.cfg.MaxEntries))
	if l.spec.Filter != "" {
		v.Set("filter", l.spec.Filter)
	}
	u := k.cfg.steamWebAPI + "/IGameServersService/GetServerList/v1/?" + v.Encode()
	rctx, cancel := context.WithTimeout(ctx, k.cfg.WebAPITimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		f.err = "the Steam Web API request could not be built"
		return
	}
	resp, err := k.cfg.HTTPClient.Do(req)
	if err != nil {
		// *url.Error would print the URL, and with it the key.
		f.err = "the Steam Web API did not answer"
		if rctx.Err() != nil {
			f.err += " within " + k.cfg.WebAPITimeout.String()
		}
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		f.err = "the Steam Web API answered " + resp.Status
		if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
			f.err += " (is --steam-web-api-key right?)"
		}
		return
	}
	var r webAPIReply
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxWebAPIBody)).Decode(&r); err != nil {
		f.err = "the Steam Web API's answer does not decode: " + err.Error()
		return
	}
	f.pages = 1
	for _, s := range r.Response.Servers {
		ap, err := netip.ParseAddrPort(s.Addr)
		if err != nil {
			f.hostile++
			continue
		}
		if !f.add(k, ap) {
			f.err = "the list was cut at " + strconv.Itoa(k.cfg.MaxEntries) + " entries"
			progress()
			return
		}
	}
	f.complete = true
	progress()
}
