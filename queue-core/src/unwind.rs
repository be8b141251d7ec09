//! Running a step for every element even when one step panics.

/// Calls `each` on every value `next` yields, even if some calls panic; the first panic is
/// then re-raised once all values are done.
///
/// With `std`, each call runs under `catch_unwind`, so any number of panics is survived.
/// Without `std` there is no `catch_unwind`: a guard finishes the remaining calls while the
/// first panic unwinds, and a second panic during that unwinding aborts (as any panic in a
/// destructor during unwinding does).
pub(crate) fn each_despite_panics<X>(mut next: impl FnMut() -> Option<X>, mut each: impl FnMut(X)) {
    #[cfg(feature = "std")]
    {
        let mut first = None;
        while let Some(value) = next() {
            let call = core::panic::AssertUnwindSafe(|| each(value));
            if let Err(panic) = std::panic::catch_unwind(call) {
                first.get_or_insert(panic);
            }
        }
        if let Some(panic) = first {
            std::panic::resume_unwind(panic);
        }
    }
    #[cfg(not(feature = "std"))]
    {
        /// Finishes the remaining calls if one of them unwinds.
        struct Rest<'f, X>(&'f mut dyn FnMut() -> Option<X>, &'f mut dyn FnMut(X));
        impl<X> Drop for Rest<'_, X> {
            fn drop(&mut self) {
                while let Some(value) = (self.0)() {
                    (self.1)(value);
                }
            }
        }
        let rest = Rest(&mut next, &mut each);
        while let Some(value) = (rest.0)() {
            (rest.1)(value);
        }
    }
}

#[cfg(all(test, feature = "std", not(loom)))]
mod tests {
    use super::each_despite_panics;
    use alloc::vec::Vec;
    use core::cell::RefCell;

    #[test]
    fn every_value_is_visited_and_the_first_panic_is_raised() {
        let seen = RefCell::new(Vec::new());
        let mut values = [1, 2, 3, 4].into_iter();
        let result = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            each_despite_panics(
                || values.next(),
                |n| {
                    seen.borrow_mut().push(n);
                    if n % 2 == 0 {
                        std::panic::panic_any(n);
                    }
                },
            );
        }));
        assert_eq!(*seen.borrow(), [1, 2, 3, 4]);
        assert_eq!(*result.unwrap_err().downcast::<i32>().unwrap(), 2);
    }

    #[test]
    fn no_panic_returns_normally() {
        let mut sum = 0;
        let mut values = 0..5;
        each_despite_panics(|| values.next(), |n| sum += n);
        assert_eq!(sum, 10);
    }
}
