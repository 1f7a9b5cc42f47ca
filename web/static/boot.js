// @ts-check
// Starts the server browser's decoding worker as early as the page allows:
// the layout loads this module async, so it runs as soon as it and
// live.js are in, while the page's own script still loads. browse.js then
// connects the same worker (DecodeWorker.shared()).
import { DecodeWorker } from "./live.js";

DecodeWorker.shared();
