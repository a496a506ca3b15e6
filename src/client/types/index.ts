/** The wire types of every request and response, written for the client's users. */
export type * from './config.js';
export type * from './errors.js';
export type * from './receipts.js';
export type * from './requests.js';
export type * from './responses.js';
export type * from './views.js';
