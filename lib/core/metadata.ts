/** Metadata a merchant attaches to a session or a payout: references, not documents (4 KB as JSON). */
export const METADATA_MAX_BYTES = 4096;
