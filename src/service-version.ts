/** The service's version, as /healthz, discovery and the webhooks' User-Agent state it. */
export const SERVICE_VERSION = '0.1.0';
