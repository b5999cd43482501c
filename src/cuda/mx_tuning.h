/* mx_tuning.h - every tuning constant of the device kernels, in one place (sm_90: H100/H200).
 * Changing a value here changes the launch plan built at upload; nothing else needs editing.
 * Measured reasons for each value are in tuning/results/<gpu>/kernels-*.md. */
#ifndef MX_TUNING_H
#define MX_TUNING_H

/* Cold kernel A (paper Alg. 2, "segment"): a block of SEG_THREADS threads owns a fixed segment of
 * SEG_THREADS * SEG_PER_THREAD cold nonzeros; its products go to shared memory (8 B each). */
#define MX_SEG_THREADS 256
#define MX_SEG_PER_THREAD 8
#define MX_SEG_NNZ (MX_SEG_THREADS * MX_SEG_PER_THREAD)
/* largest lane group that accumulates one row from shared memory (power of two, <= 32) */
#define MX_SEG_MAX_GROUP 32

/* Cold kernel B (merge path, Merrill & Garland): a tile of MERGE_THREADS threads consumes
 * MERGE_THREADS * MERGE_ITEMS merge items (row ends + nonzeros). */
#define MX_MERGE_THREADS 256
#define MX_MERGE_ITEMS 7
#define MX_MERGE_TILE (MX_MERGE_THREADS * MX_MERGE_ITEMS)
/* blocks per SM the merge kernel is compiled for: 8 x 23.7 KB smem fits; caps registers at 32
 * (without it ptxas picks 32 registers AND spills 4 bytes; with 1 it takes 90 = 2 blocks/SM) */
#define MX_MERGE_MIN_BLOCKS 8
#define MX_FIXUP_THREADS 256

/* MX_COLD_AUTO: choose the merge kernel when the longest cold row exceeds AUTO_MAX_ROW_SEGS
 * segments, or when the row-length coefficient of variation exceeds AUTO_CV (see mx_device.cu). */
#define MX_AUTO_MAX_ROW_SEGS 1
#define MX_AUTO_CV 2.0

/* Hot kernels: one warp per work item (a chunk, or a piece of a long chunk). */
#define MX_HOT_WARPS_PER_BLOCK 4
/* A DU chunk with more TC blocks than this is split into pieces of this many blocks
 * (partials summed by a second, ordered pass). */
#define MX_DU_BLOCKS_PER_WARP 128
/* An SE chunk wider than this many slot columns is split likewise. */
#define MX_SE_COLS_PER_WARP 256

/* value refresh gather */
#define MX_GATHER_THREADS 256

#endif
