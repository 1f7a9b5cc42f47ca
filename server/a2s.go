package server

import (
	"strconv"

	"github.com/querylens/querylens/codecs/a2s"
)

// Steam's master picks a game's servers by its app id: the page's game
// picker offers SteamGames.
func init() { registerGames(a2s.Protocol, SteamGames) }

// SteamGame is one game whose servers Steam's master lists: the filter
// \appid\N asks the master for that game's servers only.
type SteamGame struct {
	Name  string `json:"name"`
	AppID int    `json:"appid"`
	// Port is the game's default A2S query port (where a server answers
	// A2S_INFO), which is not always its game port.
	Port int `json:"port"`
}

// Filter is the Steam master filter that lists the game's servers.
func (g SteamGame) Filter() string { return `\appid\` + strconv.Itoa(g.AppID) }

// SteamGames are the best-known games with servers on Steam's master, by
// name. The app IDs are Steam's (the Valve Developer Community's "Steam
// Application IDs" page, https://developer.valvesoftware.com/wiki/Steam_Application_IDs,
// and SteamDB, https://steamdb.info/); the query ports are the games'
// documented defaults as GameDig's game list (github.com/gamedig/node-gamedig,
// lib/games.js: port plus port_query_offset) gives them. A game's dedicated
// server is often a separate app (Team Fortress 2's is 232250): masters
// list servers under the game's own app ID, which is the one here.
var SteamGames = []SteamGame{
	{"7 Days to Die", 251570, 26900},
	{"Age of Chivalry", 17510, 27015},
	{"Alien Swarm", 630, 27015},
	{"ARK: Survival Ascended", 2399830, 7777},
	{"ARK: Survival Evolved", 346110, 27015},
	{"Arma 2: Operation Arrowhead", 33930, 2303},
	{"Arma 3", 107410, 2303},
	{"Arma Reforger", 1874880, 17777},
	{"Black Mesa", 362890, 27015},
	{"Chivalry: Medieval Warfare", 219640, 27015},
	{"Conan Exiles", 440900, 27015},
	{"Contagion", 238430, 27015},
	{"Counter-Strike", 10, 27015},
	{"Counter-Strike 2", 730, 27015},
	{"Counter-Strike: Condition Zero", 80, 27015},
	{"Counter-Strike: Source", 240, 27015},
	{"Day of Defeat", 30, 27015},
	{"Day of Defeat: Source", 300, 27015},
	{"Day of Infamy", 447820, 27015},
	{"DayZ", 221100, 27016},
	{"Deathmatch Classic", 40, 27015},
	{"Don't Starve Together", 322330, 27016},
	{"Empires", 17740, 27015},
	{"Fistful of Frags", 265630, 27015},
	{"Garry's Mod", 4000, 27015},
	{"Half-Life", 70, 27015},
	{"Half-Life 2: Deathmatch", 320, 27015},
	{"Half-Life Deathmatch: Source", 360, 27015},
	{"Half-Life: Opposing Force", 50, 27015},
	{"Insurgency", 222880, 27015},
	{"Insurgency: Sandstorm", 581320, 27131},
	{"Killing Floor", 1250, 7708},
	{"Killing Floor 2", 232090, 27015},
	{"Left 4 Dead", 500, 27015},
	{"Left 4 Dead 2", 550, 27015},
	{"Mordhau", 629760, 27015},
	{"Natural Selection 2", 4920, 27016},
	{"No More Room in Hell", 224260, 27015},
	{"Nuclear Dawn", 17710, 27015},
	{"Palworld", 1623730, 27015},
	{"Project Zomboid", 108600, 16261},
	{"Ricochet", 60, 27015},
	{"Rust", 252490, 28015},
	{"Space Engineers", 244850, 27016},
	{"Squad", 393380, 27165},
	{"Starbound", 211820, 21025},
	{"Sven Co-op", 225840, 27015},
	{"Synergy", 17520, 27015},
	{"Team Fortress 2", 440, 27015},
	{"Team Fortress Classic", 20, 27015},
	{"The Ship", 2400, 27015},
	{"Unturned", 304930, 27016},
	{"V Rising", 1604030, 27016},
	{"Valheim", 892970, 2457},
	{"Zombie Panic! Source", 17500, 27015},
}
