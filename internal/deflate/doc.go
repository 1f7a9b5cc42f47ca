// Package deflate is a slow, thorough DEFLATE (RFC 1951) encoder with a gzip
// (RFC 1952) wrapper, written to precompress the browser module once at build
// time: it spends far more CPU than compress/flate to find a smaller encoding
// that every inflater still reads. It is in the class of zopfli (optimal
// parsing with iterated statistics, block splitting), written from the
// format and those published techniques, in pure Go with no dependencies, so
// that the build needs no system compressor.
//
// On the 2.9 MB browser module it gives about 4.6 % less than gzip -9 and a
// little less than zopfli --i15, in about 7 s of CPU and 90 MB of memory
// (BENCHMARKS.md has the measured numbers).
//
// # How a stream is made
//
// The input is cut into chunks of ChunkSize bytes so that working memory
// depends on the chunk, not on the input. For each chunk:
//
//  1. Match finding (lz77.go): hash chains over the 32 KiB window give, for
//     every position, the smallest distance at which each match length
//     3..258 is available, stored as a short staircase of (length, distance)
//     steps. Only Options.MaxChain candidates are examined per position.
//  2. A greedy parse with one step of lazy matching seeds everything else.
//  3. Block splitting (split.go) on those tokens: the best single split point
//     of a block is searched by sampling and narrowing, kept if the two
//     halves are smaller than the whole, and the largest remaining block is
//     tried next, up to Options.MaxBlocks blocks.
//  4. Per block, iterated optimal parsing (parse.go): a shortest path over
//     the positions, where a literal or a (length, distance) pair costs
//     -log2 of its frequency in the previous pass. Options.Iterations passes
//     run and the smallest block is kept; when passes stop improving, the
//     statistics are perturbed and then blended with the previous ones.
//  5. The optimised tokens are laid out in blocks again (gzip.go: plan):
//     the best of the previous layout, a fresh split, a segmentation by
//     dynamic programming over boundaries (which finds layouts such as
//     stored, coded, stored where no single split pays on its own), and
//     equal cuts; then neighbours are merged while that helps. Steps 4 and 5
//     repeat for up to Options.Rounds rounds while the chunk shrinks.
//  6. Each block is written (block.go) as stored, fixed or dynamic, whichever
//     is smallest (a block that might be fixed is re-parsed with the fixed
//     code's costs), with length-limited optimal Huffman codes (huffman.go:
//     package-merge, 15 bits, 7 for the code-length code), the best of the
//     eight ways of run-length coding the code lengths (symbols 16, 17, 18),
//     and, where smaller, codes built from evened-out counts whose lengths
//     repeat more.
//
// # Guarantees
//
// The output is deterministic: the same input and Options give the same
// bytes on every machine. There is no map iteration, time or concurrency; the
// perturbation uses a fixed-seed generator; and all costs are integers
// (fixed-point bits with an integer log2), because floating point may round
// differently across architectures (fused multiply-add) and change the parse.
// testdata/golden.txt pins the output hashes. The gzip header carries no name
// and no time, and the OS byte is "unknown".
//
// Every Huffman code written is complete (the Kraft sum is exactly one) and
// has at least two codes, because some inflaters (zlib among them) refuse
// incomplete code-length codes.
//
// Nothing here can fail: every input, including an empty one, has an
// encoding, so the functions return no error.
package deflate
