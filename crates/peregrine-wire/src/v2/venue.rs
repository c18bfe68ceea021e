//! Protocol version 3's order-entry messages: conditional and iceberg orders, order
//! lists, market-maker protection, and the admin market commands; their reports.
//! Every report here but `MarketControlDone` belongs to an account's report stream
//! (`report_seq`, `account`), like version 2's. Version 3 is additive: these types
//! are new, and the version-2 `Fill` gains its fee (`docs/protocol.md`, "Changes in
//! version 3"). The messages are declared in `schema/protocol.xml`.

use peregrine_types::{InstrumentId, ListKind};

use crate::field::{ListLeg, Pad};

include!(concat!(env!("OUT_DIR"), "/msg_v2__venue.rs"));

/// Spreads `legs` over a message's per-leg fields, or gathers them back: one
/// `$apply!(leg_index, leg_field_prefix)` per leg.
macro_rules! each_leg {
    ($apply:ident) => {
        $apply!(
            0,
            leg0_client_order_id,
            leg0_price,
            leg0_qty,
            leg0_expire_at,
            leg0_stop_price,
            leg0_display_qty,
            leg0_trail,
            leg0_side,
            leg0_order_type,
            leg0_tif,
            leg0_stp,
            leg0_trigger,
            leg0_trail_unit
        );
        $apply!(
            1,
            leg1_client_order_id,
            leg1_price,
            leg1_qty,
            leg1_expire_at,
            leg1_stop_price,
            leg1_display_qty,
            leg1_trail,
            leg1_side,
            leg1_order_type,
            leg1_tif,
            leg1_stp,
            leg1_trigger,
            leg1_trail_unit
        );
        $apply!(
            2,
            leg2_client_order_id,
            leg2_price,
            leg2_qty,
            leg2_expire_at,
            leg2_stop_price,
            leg2_display_qty,
            leg2_trail,
            leg2_side,
            leg2_order_type,
            leg2_tif,
            leg2_stp,
            leg2_trigger,
            leg2_trail_unit
        );
    };
}

impl NewOrderList {
    /// A list of `kind` on `instrument` with these legs (an OCO or OTO uses legs 0 and
    /// 1: pass [`ListLeg::UNUSED`] for leg 2).
    pub fn new(
        client_list_id: peregrine_types::ClientOrderId,
        instrument: InstrumentId,
        kind: ListKind,
        legs: [ListLeg; 3],
    ) -> NewOrderList {
        let u = ListLeg::UNUSED;
        let mut m = NewOrderList {
            client_list_id,
            leg0_client_order_id: u.client_order_id,
            leg0_price: u.price,
            leg0_qty: u.qty,
            leg0_expire_at: u.expire_at,
            leg0_stop_price: u.stop_price,
            leg0_display_qty: u.display_qty,
            leg1_client_order_id: u.client_order_id,
            leg1_price: u.price,
            leg1_qty: u.qty,
            leg1_expire_at: u.expire_at,
            leg1_stop_price: u.stop_price,
            leg1_display_qty: u.display_qty,
            leg2_client_order_id: u.client_order_id,
            leg2_price: u.price,
            leg2_qty: u.qty,
            leg2_expire_at: u.expire_at,
            leg2_stop_price: u.stop_price,
            leg2_display_qty: u.display_qty,
            instrument,
            leg0_trail: u.trail,
            leg1_trail: u.trail,
            leg2_trail: u.trail,
            kind,
            leg0_side: u.side,
            leg0_order_type: u.order_type,
            leg0_tif: u.tif,
            leg0_stp: u.stp,
            leg0_trigger: u.trigger,
            leg0_trail_unit: u.trail_unit,
            leg1_side: u.side,
            leg1_order_type: u.order_type,
            leg1_tif: u.tif,
            leg1_stp: u.stp,
            leg1_trigger: u.trigger,
            leg1_trail_unit: u.trail_unit,
            leg2_side: u.side,
            leg2_order_type: u.order_type,
            leg2_tif: u.tif,
            leg2_stp: u.stp,
            leg2_trigger: u.trigger,
            leg2_trail_unit: u.trail_unit,
            reserved: Pad,
        };
        macro_rules! put {
            ($i:expr, $c:ident, $p:ident, $q:ident, $e:ident, $s:ident, $d:ident, $t:ident,
             $side:ident, $ot:ident, $tif:ident, $stp:ident, $tr:ident, $tu:ident) => {
                let l = legs[$i];
                m.$c = l.client_order_id;
                m.$p = l.price;
                m.$q = l.qty;
                m.$e = l.expire_at;
                m.$s = l.stop_price;
                m.$d = l.display_qty;
                m.$t = l.trail;
                m.$side = l.side;
                m.$ot = l.order_type;
                m.$tif = l.tif;
                m.$stp = l.stp;
                m.$tr = l.trigger;
                m.$tu = l.trail_unit;
            };
        }
        each_leg!(put);
        m
    }

    /// The three legs (the unused ones all zero).
    pub fn legs(&self) -> [ListLeg; 3] {
        let mut legs = [ListLeg::UNUSED; 3];
        macro_rules! get {
            ($i:expr, $c:ident, $p:ident, $q:ident, $e:ident, $s:ident, $d:ident, $t:ident,
             $side:ident, $ot:ident, $tif:ident, $stp:ident, $tr:ident, $tu:ident) => {
                legs[$i] = ListLeg {
                    client_order_id: self.$c,
                    price: self.$p,
                    qty: self.$q,
                    expire_at: self.$e,
                    stop_price: self.$s,
                    display_qty: self.$d,
                    trail: self.$t,
                    side: self.$side,
                    order_type: self.$ot,
                    tif: self.$tif,
                    stp: self.$stp,
                    trigger: self.$tr,
                    trail_unit: self.$tu,
                };
            };
        }
        each_leg!(get);
        legs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WireMessage;

    #[test]
    fn list_legs_round_trip_through_the_message() {
        let m = NewOrderList::sample(&[3, 5, 7, 11, 13, 17, 19, 23]);
        let again = NewOrderList::new(m.client_list_id, m.instrument, m.kind, m.legs());
        assert_eq!(again, m);
        let legs = m.legs();
        assert_eq!(legs[1].qty, m.leg1_qty);
        assert_eq!(legs[2].trail_unit, m.leg2_trail_unit);
        assert_ne!(legs[0], legs[1]);
    }
}
