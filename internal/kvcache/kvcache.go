package kvcache

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// DefaultBlockSize is vLLM's default block size, in tokens.
const DefaultBlockSize = 16

// MaxBlockSize is the largest block size accepted, in tokens.
const MaxBlockSize = 1024

// RootHash is the parent hash of a prompt's first block.
const RootHash uint64 = 0x9e3779b97f4a7c15

// xxHash64's primes.
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
)

// ErrBlockSize and ErrCapacity report an invalid block size or capacity.
var (
	ErrBlockSize = errors.New("kvcache: invalid block size")
	ErrCapacity  = errors.New("kvcache: invalid capacity")
)

// CheckBlockSize returns an error wrapping [ErrBlockSize] unless 1 ≤ n ≤ [MaxBlockSize].
func CheckBlockSize(n int) error {
	if n < 1 || n > MaxBlockSize {
		return fmt.Errorf("%w %d: want 1 to %d tokens", ErrBlockSize, n, MaxBlockSize)
	}
	return nil
}

// CheckCapacity returns an error wrapping [ErrCapacity] if c < 0 (0 is unbounded).
func CheckCapacity(c int) error {
	if c < 0 {
		return fmt.Errorf("%w %d: want 0 (unbounded) or more blocks", ErrCapacity, c)
	}
	return nil
}

// BlockHash is the hash of a block of token ids whose parent block has hash parent
// ([RootHash] for a prompt's first block): xxHash64's 8-byte lane step per id, then its
// avalanche.
func BlockHash(parent uint64, ids []int) uint64 {
	h := parent
	for _, id := range ids {
		k := bits.RotateLeft64(uint64(id)*prime2, 31) * prime1
		h = bits.RotateLeft64(h^k, 27)*prime1 + prime4
	}
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// AppendHashes appends the chained hashes of ids' full blocks of blockSize ids to dst
// (len(ids)/blockSize of them) and returns it. It panics if blockSize < 1.
func AppendHashes(dst []uint64, ids []int, blockSize int) []uint64 {
	if blockSize < 1 {
		panic("kvcache: block size < 1")
	}
	h := RootHash
	for b := 0; b+blockSize <= len(ids); b += blockSize {
		h = BlockHash(h, ids[b:b+blockSize])
		dst = append(dst, h)
	}
	return dst
}

// Lookable is the number of a prompt of n tokens' full blocks that a lookup may hit:
// those that end before its last token, (n−1)/blockSize (0 for an empty prompt).
func Lookable(n, blockSize int) int {
	if n <= 0 {
		return 0
	}
	return (n - 1) / blockSize
}

// Cache is a prefix cache of token blocks with LRU eviction, safe for concurrent use.
type Cache struct {
	blockSize int
	mu        sync.Mutex
	lru       *LRU
	buf       []uint64
}

// New returns an empty cache of capacity blocks of blockSize tokens (capacity 0 =
// unbounded). It returns an error wrapping [ErrBlockSize] or [ErrCapacity].
func New(blockSize, capacity int) (*Cache, error) {
	if err := errors.Join(CheckBlockSize(blockSize), CheckCapacity(capacity)); err != nil {
		return nil, err
	}
	return &Cache{blockSize: blockSize, lru: NewLRU(capacity)}, nil
}

// BlockSize returns the cache's block size, in tokens.
func (c *Cache) BlockSize() int { return c.blockSize }

// Capacity returns the cache's capacity in blocks (0 = unbounded).
func (c *Cache) Capacity() int { return c.lru.Capacity() }

// Access looks the prompt ids up, then inserts its full blocks (see the package
// comment), and returns the tokens served from the cache: the leading lookable
// blocks found, times the block size.
func (c *Cache) Access(ids []int) (cachedTokens int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = AppendHashes(c.buf[:0], ids, c.blockSize)
	return c.lru.Access(c.buf, Lookable(len(ids), c.blockSize)) * c.blockSize
}

// Len returns the number of blocks cached.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Reset empties the cache.
func (c *Cache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Reset()
}
