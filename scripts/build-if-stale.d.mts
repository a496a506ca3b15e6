/** Types of build-if-stale.mjs (plain JavaScript, so `npm start` needs no TypeScript loader to check). */
export declare const repoRoot: string;
export declare function isStale(): boolean;
export declare function ensureBuilt(options?: { stdio?: 'inherit' | 'pipe' }): Promise<boolean>;
