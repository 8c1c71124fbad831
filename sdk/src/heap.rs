//! The component's allocator: a free list per power-of-two size.
//!
//! Parsing a line allocates and frees many small blocks of the same few
//! sizes, and a driver's memory lives as long as its turn. So a block is
//! never split or merged: allocating pops the free list of its size class
//! (or cuts a new block from memory grown for it), freeing pushes it back.
//! Both are a handful of instructions, where a general allocator searches
//! bins and coalesces neighbours. The price is memory: a block takes up to
//! twice its size, and a freed block serves only its own class again.
//!
//! Memory grows only through [`Grow`] (`memory.grow` in a component, which
//! the host caps), so a driver that asks for too much gets a null pointer
//! and Rust's out-of-memory handling, not more than its limit.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;
use std::ptr::null_mut;

/// The smallest class: 16 bytes, so that every block can hold the free
/// list's link and every block cut from fresh memory is 16-byte aligned.
const SMALLEST_CLASS: u32 = 4;

/// Classes up to 2^31 bytes, all of a 32-bit memory.
const CLASSES: usize = 32;

/// Memory grows by whole wasm pages of this size.
pub const PAGE: usize = 64 * 1024;

/// Memory is grown at least this many pages at a time, so that small blocks
/// do not each cost a call into the host.
const LEAST_GROWTH: usize = 16;

/// Where new memory comes from.
pub trait Grow {
    /// Adds `pages` pages of zeroed memory and returns the address of the
    /// first; `None` when no more may be had.
    fn grow(&mut self, pages: usize) -> Option<usize>;
}

/// The allocator's state: the free lists and the fresh memory not yet cut
/// into blocks (from `next` to `end`).
pub struct Heap<G> {
    free: [*mut u8; CLASSES],
    next: usize,
    end: usize,
    memory: G,
}

impl<G: Grow> Heap<G> {
    /// An empty heap that grows from `memory`.
    pub const fn new(memory: G) -> Self {
        Self {
            free: [null_mut(); CLASSES],
            next: 0,
            end: 0,
            memory,
        }
    }

    /// A block for `layout`, or null when memory cannot grow enough.
    pub fn allocate(&mut self, layout: Layout) -> *mut u8 {
        let Some(class) = class_of(layout) else {
            return null_mut();
        };
        let head = self.free[class];
        // A freed block is aligned to 16 at least; a rarer, larger
        // alignment is cut from fresh memory when the head does not have it.
        if !head.is_null() && head.addr().is_multiple_of(layout.align()) {
            // SAFETY: a block on a free list is free and holds its successor.
            self.free[class] = unsafe { head.cast::<*mut u8>().read() };
            return head;
        }
        self.cut(1 << class, layout.align().max(1 << SMALLEST_CLASS))
    }

    /// Gives back `block`, allocated for `layout`.
    ///
    /// # Safety
    /// `block` came from [`Heap::allocate`] (or [`Heap::reallocate`]) of
    /// this heap with `layout`, and is not used again.
    pub unsafe fn free(&mut self, block: *mut u8, layout: Layout) {
        let Some(class) = class_of(layout) else {
            return;
        };
        // SAFETY: the block is at least 16 bytes, aligned to 16, and ours.
        unsafe { block.cast::<*mut u8>().write(self.free[class]) };
        self.free[class] = block;
    }

    /// Resizes `block`, allocated for `layout`, to `new_size` bytes: in
    /// place when the size stays in its class.
    ///
    /// # Safety
    /// As for [`Heap::free`]; on success the old pointer is not used again.
    pub unsafe fn reallocate(
        &mut self,
        block: *mut u8,
        layout: Layout,
        new_size: usize,
    ) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return null_mut();
        };
        if class_of(layout) == class_of(new_layout) {
            return block;
        }
        let moved = self.allocate(new_layout);
        if !moved.is_null() {
            // SAFETY: both blocks are ours and distinct; each holds the
            // bytes copied.
            unsafe {
                std::ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                self.free(block, layout);
            }
        }
        moved
    }

    /// A new block of `size` bytes aligned to `align`, from fresh memory.
    fn cut(&mut self, size: usize, align: usize) -> *mut u8 {
        if let Some(block) = self.cut_from_fresh(size, align) {
            return block;
        }
        let Some(needed) = size.checked_add(align) else {
            return null_mut();
        };
        let Some((start, pages)) = self.grow_for(needed.div_ceil(PAGE)) else {
            return null_mut();
        };
        // Memory grown by anyone else in between (the C library's own
        // allocator, say) is not ours: what was left before it is dropped.
        if start != self.end {
            self.next = start;
        }
        self.end = start + pages * PAGE;
        self.cut_from_fresh(size, align).unwrap_or(null_mut())
    }

    /// Grows memory by at least `pages`, by [`LEAST_GROWTH`] when it may:
    /// where the new pages start, and how many there are.
    fn grow_for(&mut self, pages: usize) -> Option<(usize, usize)> {
        if pages < LEAST_GROWTH
            && let Some(start) = self.memory.grow(LEAST_GROWTH)
        {
            return Some((start, LEAST_GROWTH));
        }
        Some((self.memory.grow(pages)?, pages))
    }

    fn cut_from_fresh(&mut self, size: usize, align: usize) -> Option<*mut u8> {
        let start = self.next.checked_next_multiple_of(align)?;
        let end = start.checked_add(size)?;
        if end > self.end {
            return None;
        }
        self.next = end;
        Some(std::ptr::with_exposed_provenance_mut(start))
    }
}

/// The class of a layout: the power of two that holds its size and its
/// alignment; `None` past the largest.
fn class_of(layout: Layout) -> Option<usize> {
    let size = layout
        .size()
        .max(layout.align())
        .max(1 << SMALLEST_CLASS)
        .checked_next_power_of_two()?;
    let class = size.trailing_zeros() as usize;
    (class < CLASSES).then_some(class)
}

/// A [`Heap`] as the global allocator of a single-threaded program.
pub struct SingleThreaded<G>(UnsafeCell<Heap<G>>);

impl<G: Grow> SingleThreaded<G> {
    /// The allocator over `heap`.
    pub const fn new(heap: Heap<G>) -> Self {
        Self(UnsafeCell::new(heap))
    }
}

// SAFETY: only a component uses it as its global allocator, and a
// wasm32-wasip2 component runs on one thread: no two calls overlap.
unsafe impl<G> Sync for SingleThreaded<G> {}

// SAFETY: the heap hands out distinct blocks of at least the layout's size
// and alignment, and null when it has none.
unsafe impl<G: Grow> GlobalAlloc for SingleThreaded<G> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: single-threaded, and the heap's methods do not allocate.
        unsafe { (*self.0.get()).allocate(layout) }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: as above; the caller's contract is the heap's.
        unsafe { (*self.0.get()).free(block, layout) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        unsafe { (*self.0.get()).reallocate(block, layout, new_size) }
    }
}

/// A component's linear memory, grown with `memory.grow`.
#[cfg(target_arch = "wasm32")]
pub struct LinearMemory;

#[cfg(target_arch = "wasm32")]
impl Grow for LinearMemory {
    fn grow(&mut self, pages: usize) -> Option<usize> {
        let previous = core::arch::wasm32::memory_grow(0, pages);
        (previous != usize::MAX).then(|| previous * PAGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages from one buffer, up to a limit, as `memory.grow` hands them out.
    struct Arena {
        base: usize,
        grown: usize,
        limit: usize,
        calls: usize,
    }

    impl Arena {
        fn new(limit: usize) -> Self {
            let buffer = vec![0u8; (limit + 1) * PAGE].leak();
            let base = buffer
                .as_mut_ptr()
                .expose_provenance()
                .next_multiple_of(PAGE);
            Self {
                base,
                grown: 0,
                limit,
                calls: 0,
            }
        }
    }

    impl Grow for Arena {
        fn grow(&mut self, pages: usize) -> Option<usize> {
            self.calls += 1;
            if self.grown + pages > self.limit {
                return None;
            }
            let start = self.base + self.grown * PAGE;
            self.grown += pages;
            Some(start)
        }
    }

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn blocks_are_aligned_distinct_and_reused_within_their_class() {
        let mut heap = Heap::new(Arena::new(64));
        let sizes = [1, 15, 16, 17, 100, 4096, 70_000];
        let blocks: Vec<(*mut u8, Layout)> = sizes
            .iter()
            .map(|&size| {
                let layout = layout(size, 8);
                let block = heap.allocate(layout);
                assert!(
                    !block.is_null() && block.addr().is_multiple_of(16),
                    "{size}"
                );
                // SAFETY: the block holds `size` bytes.
                unsafe { block.write_bytes(size as u8, size) };
                (block, layout)
            })
            .collect();
        for (&(block, layout), &size) in blocks.iter().zip(&sizes) {
            // SAFETY: as written above; no block overlapped another.
            let bytes = unsafe { std::slice::from_raw_parts(block, layout.size()) };
            assert!(bytes.iter().all(|&byte| byte == size as u8), "{size}");
        }
        let (first, first_layout) = blocks[4];
        // SAFETY: allocated above with that layout.
        unsafe { heap.free(first, first_layout) };
        assert_eq!(
            heap.allocate(layout(120, 4)),
            first,
            "same class, same block"
        );
        assert_ne!(heap.allocate(layout(120, 4)), first);
    }

    #[test]
    fn a_larger_alignment_than_a_freed_block_has_gets_a_new_one() {
        let mut heap = Heap::new(Arena::new(16));
        let _shift = heap.allocate(layout(16, 16));
        let small = heap.allocate(layout(64, 16));
        // SAFETY: allocated above with that layout.
        unsafe { heap.free(small, layout(64, 16)) };
        let aligned = heap.allocate(layout(64, 64));
        assert_eq!(small.addr() % 64, 16);
        assert_eq!(aligned.addr() % 64, 0);
    }

    #[test]
    fn growing_within_a_class_stays_in_place_and_moving_keeps_the_bytes() {
        let mut heap = Heap::new(Arena::new(16));
        let old = layout(20, 1);
        let block = heap.allocate(old);
        // SAFETY: 20 bytes are ours.
        unsafe { block.copy_from(b"twenty bytes of text".as_ptr(), 20) };
        // SAFETY: allocated above with `old`.
        let same = unsafe { heap.reallocate(block, old, 32) };
        assert_eq!(same, block);
        // SAFETY: reallocated to 32 bytes, same alignment.
        let moved = unsafe { heap.reallocate(same, layout(32, 1), 33) };
        assert_ne!(moved, block);
        // SAFETY: 33 bytes are ours, the first 20 copied.
        assert_eq!(
            unsafe { std::slice::from_raw_parts(moved, 20) },
            b"twenty bytes of text"
        );
        assert_eq!(
            heap.allocate(layout(32, 1)),
            block,
            "the old block was freed"
        );
    }

    #[test]
    fn memory_grows_in_steps_and_a_refusal_is_a_null_block() {
        let mut heap = Heap::new(Arena::new(26));
        for _ in 0..1000 {
            assert!(!heap.allocate(layout(64, 8)).is_null());
        }
        assert_eq!(heap.memory.calls, 1, "64,000 bytes fit in the first growth");
        assert!(!heap.allocate(layout(1 << 19, 8)).is_null());
        assert_eq!(heap.memory.calls, 1, "and half a MiB more");
        // The rest of the 16 pages does not hold another half MiB; 16 more
        // pages pass the limit of 26, the 9 it takes do not.
        assert!(!heap.allocate(layout(1 << 19, 8)).is_null());
        assert_eq!((heap.memory.calls, heap.memory.grown), (3, 25));
        assert!(heap.allocate(layout(1 << 20, 8)).is_null());
        assert!(heap.allocate(layout(usize::MAX / 4, 8)).is_null());
    }

    #[test]
    fn as_the_global_allocator_it_hands_out_the_heaps_blocks() {
        let allocator = SingleThreaded::new(Heap::new(Arena::new(16)));
        let small = layout(24, 8);
        // SAFETY: each block is used with the layout it was allocated with.
        unsafe {
            let block = allocator.alloc(small);
            assert!(!block.is_null());
            let grown = allocator.realloc(block, small, 100);
            assert_ne!(grown, block);
            allocator.dealloc(grown, layout(100, 8));
            assert_eq!(allocator.alloc(small), block);
            assert_eq!(allocator.alloc(layout(128, 8)), grown);
        }
    }
}
