/* mx_tuning.h - every tuning constant of the device kernels, in one place (sm_90: H100/H200).
 * Changing a value here changes the launch plan built at upload; nothing else needs editing.
 * Each may be overridden with -D at build time (for A/B runs of the benchmark).
 * The measurements behind the values: docs/performance.md, "Cold kernels" (and "Hub split"). */
#ifndef MX_TUNING_H
#define MX_TUNING_H

/* Cold kernel A (paper Alg. 2, "segment"): a block of SEG_THREADS threads owns a fixed segment of
 * SEG_THREADS * SEG_PER_THREAD cold nonzeros; its products go to shared memory (8 B each). */
#ifndef MX_SEG_THREADS
#define MX_SEG_THREADS 256
#endif
#ifndef MX_SEG_PER_THREAD
#define MX_SEG_PER_THREAD 8
#endif
#define MX_SEG_NNZ (MX_SEG_THREADS * MX_SEG_PER_THREAD)
/* blocks per SM the segment kernel is compiled for: 6 -> 40 registers, no spill (what ptxas picks
 * unasked); 7 or 8 -> 32 registers with an 8-byte spill */
#ifndef MX_SEG_MIN_BLOCKS
#define MX_SEG_MIN_BLOCKS 6
#endif
/* most rows one segment block accumulates (their rowptr slice is staged in shared memory); a
 * segment owning more (runs of empty rows) gets several blocks, each with a share of its rows */
#ifndef MX_SEG_MAX_ROWS
#define MX_SEG_MAX_ROWS MX_SEG_NNZ
#endif
/* largest lane group that accumulates one row from shared memory (power of two, <= 32) */
#ifndef MX_SEG_MAX_GROUP
#define MX_SEG_MAX_GROUP 32
#endif
/* a block's lane group g is the largest power of two (<= MX_SEG_MAX_GROUP) with
 * MX_SEG_GROUP_K * g <= its mean row length: each lane sums about K products before the butterfly.
 * A large K means fewer instructions per nonzero where rows are short (the packed kernels are bound
 * by issued instructions; docs/performance.md, "Cold kernels"). */
#ifndef MX_SEG_GROUP_K
#define MX_SEG_GROUP_K 16
#endif
/* A row wholly inside a segment longer than max(MX_SEG_LONG_MIN, 4 gk g) is summed by its whole
 * warp: with g chosen from the block's mean, one long row among short ones would be one lane's
 * serial sum (docs/performance.md, "Cold kernels"). */
#define MX_SEG_LONG_MIN 64
/* A row running more than this many nonzeros past the end of the segment it starts in is summed in
 * parts, one per segment it covers (mx_cold_segment.cuh, "Long rows in parts"); a shorter tail is
 * read from global memory by the row's owner (one round of four loads per thread at 4 x SEG_THREADS).
 * At least MX_SEG_THREADS: a split row's tail is never staged with its first segment. */
#ifndef MX_SEG_SPLIT_TAIL
#define MX_SEG_SPLIT_TAIL (4 * MX_SEG_THREADS)
#endif
/* L2 prefetch distance of the segment kernel in plan entries (0: none, the default). With D > 0 each
 * block asks L2 (prefetch.global.L2, one instruction per 128-byte line) for what entry
 * blockIdx.x + D will read of the matrix (values or codes, columns or deltas, row pointers): about a
 * wave of resident blocks ahead (132 SMs x 6 blocks = 792 on an H100), so a block's first loads find
 * L2 instead of DRAM and more of the matrix's bytes are in flight per SM. For the A/B of a
 * latency-bound kernel (docs/performance.md, "Cold kernels"): build cold-pack-bench with
 * -DMX_SEG_L2_AHEAD=792 beside a default build; the products and sums do not change. */
#ifndef MX_SEG_L2_AHEAD
#define MX_SEG_L2_AHEAD 0
#endif

/* Cold kernel B (merge path, Merrill & Garland): a tile of MERGE_THREADS threads consumes
 * MERGE_THREADS * MERGE_ITEMS merge items (row ends + nonzeros). 5 items: 7 tiles per SM under the
 * kernel's 50% carveout (docs/performance.md, "Cold kernels", tile of 5 items). */
#ifndef MX_MERGE_THREADS
#define MX_MERGE_THREADS 256
#endif
#ifndef MX_MERGE_ITEMS
#define MX_MERGE_ITEMS 5
#endif
#define MX_MERGE_TILE (MX_MERGE_THREADS * MX_MERGE_ITEMS)
/* blocks per SM the merge kernel is compiled for: caps registers at 32
 * (at 7 items, without it ptxas picked 32 registers AND spilled 4 bytes; with 1 it took 90 = 2 blocks/SM) */
#ifndef MX_MERGE_MIN_BLOCKS
#define MX_MERGE_MIN_BLOCKS 8
#endif
/* The merge kernel adds the carries itself (no fixup launch) where its grid is at most this many
 * waves of MX_MERGE_MIN_BLOCKS tiles per SM (mx_cold_merge.cu; docs/performance.md, "Cold kernels"). */
#ifndef MX_MERGE_INLINE_WAVES
#define MX_MERGE_INLINE_WAVES 2
#endif
#ifndef MX_FIXUP_THREADS
#define MX_FIXUP_THREADS 256
#endif

/* MX_COLD_AUTO: choose the merge kernel when the longest cold row exceeds AUTO_MAX_ROW_SEGS
 * segments, or when the row-length coefficient of variation exceeds AUTO_CV (see mx_device.cu). */
#ifndef MX_AUTO_MAX_ROW_SEGS
#define MX_AUTO_MAX_ROW_SEGS 4
#endif
/* MX_COLD_AUTO times our cold kernel against cusparseSpMV at upload when the cold CSR has at least
 * this many nonzeros (below it both are launch-bound and the timing costs more than it can save),
 * MX_AUTO_TIME_REPS calls each after as many warm-up calls, and keeps cuSPARSE only if it is faster
 * by more than MX_AUTO_CUSPARSE_MARGIN (relative). */
#ifndef MX_AUTO_CUSPARSE_MIN_NNZ
#define MX_AUTO_CUSPARSE_MIN_NNZ (1 << 20)
#endif
#ifndef MX_AUTO_TIME_REPS
#define MX_AUTO_TIME_REPS 10
#endif
#ifndef MX_AUTO_CUSPARSE_MARGIN
#define MX_AUTO_CUSPARSE_MARGIN 0.02
#endif
/* MX_COLD_AUTO on a cold CSR of >= MX_AUTO_CUSPARSE_MIN_NNZ nonzeros also times the segment and the
 * merge kernel and takes the other kernel than the row-skew rule's only when it is faster by more
 * than this (relative; docs/performance.md, "Cold kernels"). */
#ifndef MX_AUTO_KERNEL_MARGIN
#define MX_AUTO_KERNEL_MARGIN 0.02
#endif
#ifndef MX_AUTO_CV
#define MX_AUTO_CV 8.0
#endif
/* The same where the merge grid is small (mx_merge_grid_small: the merge kernel adds its carries
 * itself there): merge above this coefficient of variation (docs/performance.md, "Cold kernels"). */
#ifndef MX_AUTO_CV_SMALL
#define MX_AUTO_CV_SMALL 1.0
#endif

/* Hot kernels: one warp per work item (a chunk, or a piece of a long chunk). */
#ifndef MX_HOT_WARPS_PER_BLOCK
#define MX_HOT_WARPS_PER_BLOCK 4
#endif
/* blocks per SM the DU kernel is compiled for: 10 caps it at 48 registers; unasked, ptxas picks 40
 * registers and an 8-byte spill for the x-hot instantiations */
#ifndef MX_DU_MIN_BLOCKS
#define MX_DU_MIN_BLOCKS 10
#endif
/* A DU chunk with more TC blocks than this is split into pieces of this many blocks
 * (partials summed by a second, ordered pass). */
#ifndef MX_DU_BLOCKS_PER_WARP
#define MX_DU_BLOCKS_PER_WARP 128
#endif
/* An SE chunk wider than this many slot columns is split likewise. */
#ifndef MX_SE_COLS_PER_WARP
#define MX_SE_COLS_PER_WARP 256
#endif

/* SpMM (mx_spmm.cu): threads per block of its kernels; B columns a cold row accumulates in registers
 * per pass (k below it: passes of 4); the smallest k for which the kernels are considered at all (below
 * it, and wherever the byte rule of mx_device_spmm_plan says so, one SpMV per column). Measured:
 * docs/performance.md, "Many vectors". */
#ifndef MX_SPMM_THREADS
#define MX_SPMM_THREADS 256
#endif
#ifndef MX_SPMM_COLS_PER_PASS
#define MX_SPMM_COLS_PER_PASS 8
#endif
#ifndef MX_SPMM_MIN_K
#define MX_SPMM_MIN_K 2
#endif
/* buckets of k (each k below 8, then 5 + floor(log2 k), the last one open: mx_spmm_ways.cu) for which
 * the choice of the way is timed once */
#ifndef MX_SPMM_BUCKETS
#define MX_SPMM_BUCKETS 16
#endif
/* nonzeros a cold lane loads before its gathers; a row longer than MX_SPMM_ROW_STEPS such steps of
 * its lanes is cut into pieces of MX_SPMM_PIECE nonzeros, a warp each, summed in order afterwards */
#ifndef MX_SPMM_UNROLL
#define MX_SPMM_UNROLL 4
#endif
#ifndef MX_SPMM_ROW_STEPS
#define MX_SPMM_ROW_STEPS 8
#endif
#ifndef MX_SPMM_PIECE
#define MX_SPMM_PIECE 1024
#endif
/* smaller pieces (down to MX_SPMM_PIECE_MIN, and rows that long go to them) where the pieces of
 * MX_SPMM_PIECE would give fewer than MX_SPMM_TARGET_WARPS warps (about 124 per SM on 132 SMs;
 * docs/performance.md, "Many vectors") */
#ifndef MX_SPMM_PIECE_MIN
#define MX_SPMM_PIECE_MIN 128
#endif
#ifndef MX_SPMM_TARGET_WARPS
#define MX_SPMM_TARGET_WARPS 16384
#endif
/* the SpMM's pairs are timed beside the kernels below this many columns (from 8 on a panel of 8
 * uses a whole 64-byte row of B per nonzero; where the byte rule takes the SpMVs, at every k) */
#ifndef MX_SPMM_PAIRS_MAX_K
#define MX_SPMM_PAIRS_MAX_K 8
#endif
/* Blocks per SM and shared-memory carveout (percent) of the pair kernels: the segment kernel on
 * double2 (45 KB a block) and the merge tiles with two sums a row (30 KB). A gather in flight holds
 * an L1 line, and the shared memory of more blocks leaves too few lines for them: at 4 and 7 blocks
 * (carveout 100 and the driver's) the pairs took longer than two SpMVs on large graphs
 * (docs/performance.md, "Many vectors"). */
#ifndef MX_SPMM_PAIR_MIN_BLOCKS
#define MX_SPMM_PAIR_MIN_BLOCKS 3
#endif
#ifndef MX_SPMM_PAIR_CARVEOUT
#define MX_SPMM_PAIR_CARVEOUT 72
#endif
/* the same for the segment pair kernel reading B's two columns in place (no copy); it is kept where
 * the columns are local, which the L1 left by fewer blocks serves less */
#ifndef MX_SPMM_PAIR_IN_PLACE_MIN_BLOCKS
#define MX_SPMM_PAIR_IN_PLACE_MIN_BLOCKS MX_SPMM_PAIR_MIN_BLOCKS
#endif
#ifndef MX_SPMM_PAIR_IN_PLACE_CARVEOUT
#define MX_SPMM_PAIR_IN_PLACE_CARVEOUT MX_SPMM_PAIR_CARVEOUT
#endif
#ifndef MX_SPMM_MERGE_MIN_BLOCKS
#define MX_SPMM_MERGE_MIN_BLOCKS 5
#endif
#ifndef MX_SPMM_MERGE2_CARVEOUT
#define MX_SPMM_MERGE2_CARVEOUT 72
#endif
/* The hub split's SpMM (mx_cold_hub.cu): a group of fewer columns than this runs the hub SpMV per
 * column (x values in shared memory) instead of a slab (x values gathered from a panel in L2;
 * docs/performance.md, "Many vectors") */
#ifndef MX_HUB_SLAB_MIN_COLS
#define MX_HUB_SLAB_MIN_COLS 4
#endif
/* row-major panels of B (the SpMM's panel way): the widest panel, in columns (8, 16, 32 or 64; the
 * narrower ones, 4 and 2, only where fewer columns are left) */
#ifndef MX_SPMM_PANEL_MAX
#define MX_SPMM_PANEL_MAX 64
#endif
/* The SpMM's timed choice: where its first round (each way once) took less than
 * MX_SPMM_TIMED_SHORT_US in all, each way is timed again over MX_SPMM_TIMED_REPEATS back-to-back
 * products and those times decide: one product that short is too short to time alone
 * (docs/performance.md, "Many vectors"). */
#ifndef MX_SPMM_TIMED_SHORT_US
#define MX_SPMM_TIMED_SHORT_US 1000
#endif
#ifndef MX_SPMM_TIMED_REPEATS
#define MX_SPMM_TIMED_REPEATS 8
#endif
/* the row-pattern SpMM's kernels for k <= 4: B loads a thread has in flight, U steps of G entries
 * times J columns (U = this / (J G), at least 1) */
#ifndef MX_ROWPAT_SPMM_LOADS
#define MX_ROWPAT_SPMM_LOADS 16
#endif

/* 1: matrix arrays read with ld.global.cs (evict-first) so x keeps L2; 0: plain read-only loads */
#ifndef MX_LOAD_STREAMING
#define MX_LOAD_STREAMING 1
#endif

/* x-hot cache (mx_xhot.cu): the most used columns get local ranks at upload; once per SpMV their x
 * values are gathered into a contiguous buffer that stays in L1, so their gathers leave L2 (on a
 * randomly labelled power-law graph each hot x value otherwise sits alone in its 32-byte sector).
 * AUTO takes up to XHOT_MAX_COLS columns (64 KB of x) used at least XHOT_MIN_DEG times (about once
 * per SM and SpMV), and turns the cache on only when they hold >= XHOT_MIN_SHARE of the nonzeros and
 * are scattered: their x values span >= XHOT_MIN_SPREAD times the 32-byte sectors of the packed copy. */
#ifndef MX_XHOT_MAX_COLS
#define MX_XHOT_MAX_COLS 8192
#endif
#ifndef MX_XHOT_MIN_DEG
#define MX_XHOT_MIN_DEG 128
#endif
#ifndef MX_XHOT_MIN_SHARE
#define MX_XHOT_MIN_SHARE 0.10
#endif
#ifndef MX_XHOT_MIN_SPREAD
#define MX_XHOT_MIN_SPREAD 2.0
#endif
/* AUTO: 0 = only the hot kernels (SE/DU) read the packed values, the cold CSR keeps its original
 * columns (and the cache is off at crux (0,0)); 1 = the cold kernels too. The cold kernels lose with
 * it (their shared memory leaves L1 too small for the packed values), the SE kernel gains
 * (docs/performance.md, "Cold kernels"). */
#ifndef MX_XHOT_COLD
#define MX_XHOT_COLD 0
#endif
/* Preferred shared-memory carveout (percent) of the merge and the segment kernels, set before each
 * instantiation's first launch (the environment variables MX_MERGE_CARVEOUT / MX_SEG_CARVEOUT override
 * them, for A/B in one build); -1: the driver's choice, which takes enough shared memory for the most
 * blocks per SM (merge 8 x 17.5 KB, segment 6 x 26.7 KB) and leaves L1 about 30-60 KB for the x
 * gathers. The merge kernel runs where rows are skewed (the row-length rule, the predictor), where 50
 * gains a few percent: its default; the segment kernel keeps -1 (docs/performance.md, "Cold
 * kernels"). */
#ifndef MX_MERGE_CARVEOUT
#define MX_MERGE_CARVEOUT 50
#endif
#ifndef MX_SEG_CARVEOUT
#define MX_SEG_CARVEOUT -1
#endif
/* preferred shared-memory carveout (percent) of the kernels when the cache is on; -1: driver's choice
 * (a tuning knob set at upload; MX_MERGE_CARVEOUT / MX_SEG_CARVEOUT, where not -1, are set at each
 * kernel's first launch in the process and win over it until the next upload: set them to -1 to A/B it) */
#ifndef MX_XHOT_CARVEOUT
#define MX_XHOT_CARVEOUT -1
#endif
#ifndef MX_XHOT_THREADS
#define MX_XHOT_THREADS 256
#endif

/* value refresh gather */
#ifndef MX_GATHER_THREADS
#define MX_GATHER_THREADS 256
#endif

#endif
