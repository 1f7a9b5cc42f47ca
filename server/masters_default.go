package server

// DefaultProtocol is the protocol of a bare master address (--master
// HOST:PORT, and the page's configured masters given as "host:port"), of
// `querylens master` without -p, and the inspector's first choice:
// Zandronum's, the protocol querylens began with.
const DefaultProtocol = "zandronum"

// DefaultMasters are the masters a server lists when it is given no
// --master, each where its address came from:
//
//   - Zandronum's master: the protocol table's (docs/protocols/zandronum.md).
//   - QZandronum's master, master.qzandronum.com:15300, which speaks
//     Zandronum's master protocol: Doomseeker's Q-Zandronum plugin names
//     it as its EP_DefaultMaster (src/plugins/zandronumq/
//     zandronumqengineplugin.cpp), and WebDoomer asks it beside
//     Zandronum's (src/WebDoomer/WebDoomerApi/Scheduling/
//     ServerDataFetchJob.cs).
//   - ioquake3's master, master.ioquake3.org:27950, with Quake III 1.32's
//     own query (protocol 68, "empty full"): ioquake3's sv_init.c sets it
//     as sv_master2 (sv_master1 is id's master.quake3arena.com, long
//     gone), and dpmaster's doc/techinfo.txt gives the getservers form.
//   - dpmaster.deathmask.net:27950, the public dpmaster: the DarkPlaces
//     engine heartbeats to it by default (netconn.c's sv_masterextra
//     list), and dpmaster's documentation names it. Xonotic's servers
//     register there as game "Xonotic", protocol 3, asked with
//     getserversExt (IPv6 entries too); OpenArena's (ioquake3's engine)
//     as Quake III protocol 71, the number OpenArena 0.8 speaks.
//
// Steam's master is no default: unfiltered it lists hundreds of
// thousands of servers, far beyond a list's cap; give it with a filter
// (--master 'a2s=hl2master.steampowered.com:27011?filter=\appid\440').
func DefaultMasters() []MasterSpec {
	specs := []string{
		"zandronum=master.zandronum.com:15300",
		"zandronum=master.qzandronum.com:15300?label=QZandronum",
		"quake3=master.ioquake3.org:27950?filter=68+empty+full&label=ioquake3",
		"quake3=dpmaster.deathmask.net:27950?filter=Xonotic+3+empty+full+ext&label=Xonotic",
		"quake3=dpmaster.deathmask.net:27950?filter=71+empty+full&label=OpenArena",
	}
	out := make([]MasterSpec, 0, len(specs))
	for _, s := range specs {
		m, err := ParseMasterSpec(s)
		if err != nil {
			panic("server: DefaultMasters: " + err.Error()) // a programming error, caught by the tests
		}
		out = append(out, m)
	}
	return out
}
