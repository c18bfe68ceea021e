//! Request parameters, read as Binance reads them: from the query string and, for
//! `POST`/`PUT`/`DELETE`, an `application/x-www-form-urlencoded` body, as one set.
//!
//! Strict like the real API: a parameter sent twice is -1101, a missing or empty
//! mandatory one -1102, one the endpoint does not know -1104 (every parameter must be
//! read: [`Params::finish`]), a malformed number -1100.

use super::error::{ApiError, ApiResult};

/// Most parameters one request may carry.
pub const MAX_PARAMS: usize = 64;
/// Longest raw query string or body accepted for parameters, bytes.
pub const MAX_RAW: usize = 64 * 1024;

/// The decoded parameters of one request.
#[derive(Debug, Clone, Default)]
pub struct Params {
    items: Vec<(String, String)>,
    read: Vec<bool>,
}

impl Params {
    /// Decodes `query` and `body` (both percent-encoded form syntax). Empty segments
    /// (`a=1&&b=2`) are ignored.
    pub fn parse(query: &str, body: &str) -> ApiResult<Params> {
        if query.len() > MAX_RAW || body.len() > MAX_RAW {
            return Err(ApiError::bad(
                -1101,
                "Too many parameters sent for this endpoint.",
            ));
        }
        let mut items: Vec<(String, String)> = Vec::new();
        for part in [query, body] {
            for (k, v) in form_urlencoded::parse(part.as_bytes()) {
                if k.is_empty() {
                    continue;
                }
                if items.len() == MAX_PARAMS {
                    return Err(ApiError::bad(-1101, "Too many parameters; expected fewer."));
                }
                if items.iter().any(|(have, _)| *have == k) {
                    return Err(ApiError::duplicate(&k));
                }
                items.push((k.into_owned(), v.into_owned()));
            }
        }
        let read = vec![false; items.len()];
        Ok(Params { items, read })
    }

    /// Parameters given as pairs (already decoded): the per-leg parameters of an
    /// order list, read as one order's.
    pub fn from_pairs(items: Vec<(String, String)>) -> Params {
        let read = vec![false; items.len()];
        Params { items, read }
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// No parameters?
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The value of `name`, marking it read; `None` if absent or empty.
    pub fn opt(&mut self, name: &str) -> Option<String> {
        let i = self.items.iter().position(|(k, _)| k == name)?;
        self.read[i] = true;
        let v = &self.items[i].1;
        (!v.is_empty()).then(|| v.clone())
    }

    /// A mandatory value (-1102 if absent or empty).
    pub fn req(&mut self, name: &str) -> ApiResult<String> {
        self.opt(name).ok_or_else(|| ApiError::mandatory(name))
    }

    /// An optional non-negative integer (-1100 if not digits).
    pub fn opt_u64(&mut self, name: &str) -> ApiResult<Option<u64>> {
        match self.opt(name) {
            None => Ok(None),
            Some(v) => parse_u64(&v)
                .map(Some)
                .ok_or_else(|| ApiError::illegal_chars(name)),
        }
    }

    /// A mandatory non-negative integer.
    pub fn req_u64(&mut self, name: &str) -> ApiResult<u64> {
        self.opt_u64(name)?.ok_or_else(|| ApiError::mandatory(name))
    }

    /// An optional `limit`: `default` if absent, else `1..=max` (-1130 outside).
    pub fn limit(&mut self, default: u64, max: u64) -> ApiResult<usize> {
        match self.opt_u64("limit")? {
            None => Ok(default as usize),
            Some(n) if (1..=max).contains(&n) => Ok(n as usize),
            Some(_) => Err(ApiError::invalid_value("limit")),
        }
    }

    /// Marks `name` read without looking at it (for parameters the gateway accepts
    /// and ignores, such as `recvWindow` on a public endpoint).
    pub fn ignore(&mut self, name: &str) {
        let _ = self.opt(name);
    }

    /// -1104 if any parameter was never read.
    pub fn finish(&self) -> ApiResult<()> {
        let read = self.read.iter().filter(|r| **r).count();
        if read == self.items.len() {
            Ok(())
        } else {
            Err(ApiError::unread(read, self.items.len()))
        }
    }
}

/// Digits only, at most 20, fitting a u64.
pub fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 20 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_and_body_form_one_set() {
        let mut p = Params::parse("symbol=PGN-USD&side=BUY", "quantity=1&price=100.5").unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p.req("symbol").unwrap(), "PGN-USD");
        assert_eq!(p.opt("price").as_deref(), Some("100.5"));
        assert_eq!(p.finish().unwrap_err().code, -1104);
        p.ignore("side");
        p.ignore("quantity");
        p.finish().unwrap();
    }

    #[test]
    fn duplicates_are_refused_even_across_query_and_body() {
        assert_eq!(Params::parse("a=1&a=2", "").unwrap_err().code, -1101);
        assert_eq!(Params::parse("a=1", "a=1").unwrap_err().code, -1101);
    }

    #[test]
    fn percent_encoding_is_decoded() {
        let mut p = Params::parse("newClientOrderId=my%2Did+1", "").unwrap();
        assert_eq!(p.req("newClientOrderId").unwrap(), "my-id 1");
    }

    #[test]
    fn mandatory_empty_and_numbers() {
        let mut p = Params::parse("symbol=&limit=12x&n=5", "").unwrap();
        assert_eq!(p.req("symbol").unwrap_err().code, -1102);
        assert_eq!(p.opt_u64("limit").unwrap_err().code, -1100);
        assert_eq!(p.req_u64("n").unwrap(), 5);
        assert_eq!(p.req_u64("missing").unwrap_err().code, -1102);
        let mut p = Params::parse("limit=0", "").unwrap();
        assert_eq!(p.limit(100, 5000).unwrap_err().code, -1130);
        let mut p = Params::parse("limit=5001", "").unwrap();
        assert_eq!(p.limit(100, 5000).unwrap_err().code, -1130);
        let mut p = Params::parse("", "").unwrap();
        assert_eq!(p.limit(100, 5000).unwrap(), 100);
    }

    #[test]
    fn too_many_parameters() {
        let q: Vec<String> = (0..=MAX_PARAMS).map(|i| format!("p{i}=1")).collect();
        assert_eq!(Params::parse(&q.join("&"), "").unwrap_err().code, -1101);
    }
}
